//! Host-driven tests of the Write tool component live in `all/`.
