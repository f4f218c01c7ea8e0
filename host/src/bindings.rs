//! The one place that generates host bindings from `wit/`.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "write-tool",
});
