//! Link settings of the component itself, whoever builds it.

fn main() {
    // Start linear memory at 8 MiB rather than just past the stack and
    // data (about 1.1 MiB). wasi-libc's allocator uses the initial memory
    // before it grows any, and a call of up to a few MiB (a 1 MiB diff)
    // then never grows memory. Hosts only reserve the pages; none is
    // touched until used. In wasmtime's pooling allocator, whose memory
    // slots keep their size between instances, each `memory.grow` and the
    // shrink back when the slot is reused were an `mprotect` apiece,
    // walking the page tables of every page grown. 16 MiB measured the
    // same. The host's `MIN_MEMORY_LIMIT_BYTES` says this size too.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=--initial-memory={}", 8 << 20);
    }
}
