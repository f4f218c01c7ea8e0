//! The one place that generates bindings from `wit/`.

wit_bindgen::generate!({
    path: "../wit",
    world: "write-tool",
    pub_export_macro: true,
});
