//! Link settings of the component itself, whoever builds it.

fn main() {
    // Start linear memory at 8 MiB rather than just past the stack and
    // data. wasi-libc's allocator uses the initial memory before it grows
    // any, so a call of up to a few MiB never grows memory; in wasmtime's
    // pooling allocator each grow, and each shrink back when the slot is
    // reused, is an `mprotect` (BENCHMARKS.md#fresh-memory-per-call), which
    // walks the page tables of every page grown. Hosts only reserve
    // the pages: none is touched until used. The host's
    // `MIN_MEMORY_LIMIT_BYTES` says this size too.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=--initial-memory={}", 8 << 20);
    }
}
