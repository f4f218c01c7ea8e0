//! Builds the guest component for `wasm32-wasip2` and embeds it.
//!
//! The wasmtime way (`crates/gdbstub-component/artifact/build.rs`): a nested
//! `cargo build` with its own target directory under `OUT_DIR` (sharing the
//! outer one deadlocks), with the outer build's flags and wrappers removed so
//! that they do not leak into a build for another target. The `.d` file of
//! the nested build names every source it read, and each becomes a
//! `rerun-if-changed`.
//!
//! The embedded component gets a `package-docs` custom section: the WIT's
//! documentation, which `wasm-tools component wit` prints and agent
//! runtimes turn into tool descriptions.
//!
//! Set `WRITE_TOOL_GUEST_WASM` to a prebuilt component to skip the nested
//! build.

use sha2::Digest;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const TARGET: &str = "wasm32-wasip2";
const GUEST: &str = "write-tool-guest";
const ARTIFACT: &str = "write_tool_guest";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // One line, on the build's error output, naming the fix.
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    println!("cargo:rerun-if-env-changed=WRITE_TOOL_GUEST_WASM");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let embedded = out_dir.join(format!("{ARTIFACT}.wasm"));

    let wasm = match env::var_os("WRITE_TOOL_GUEST_WASM") {
        Some(prebuilt) => {
            let prebuilt = PathBuf::from(prebuilt);
            println!("cargo:rerun-if-changed={}", prebuilt.display());
            prebuilt
        }
        None => build_guest(&out_dir)?,
    };
    let bytes = fs::read(&wasm).map_err(|e| format!("cannot read {}: {e}", wasm.display()))?;
    let wit = manifest_dir()?
        .parent()
        .ok_or("host crate has no parent directory")?
        .join("wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let documented = with_package_docs(bytes, &wit)?;
    // The compile cache's key for this component, hashed here once rather
    // than at every start of the binary (`host/src/cache.rs`). It goes in a
    // file, not `cargo:rustc-env`: cargo also sets that variable in the
    // processes `cargo test` runs, and hosts that hand their environment to
    // the component (jco's preview2-shim) would pass it on, where the guest
    // refuses unknown `WRITE_TOOL_*` settings.
    // SHA-256, as `cache.rs` hashes any other component.
    let key: String = sha2::Sha256::digest(&documented)[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let key_file = out_dir.join("component_key");
    fs::write(&key_file, format!("\"{key}\""))
        .map_err(|e| format!("cannot write {}: {e}", key_file.display()))?;
    fs::write(&embedded, documented)
        .map_err(|e| format!("cannot write {}: {e}", embedded.display()))?;
    Ok(())
}

fn manifest_dir() -> Result<PathBuf, String> {
    Ok(PathBuf::from(
        env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?,
    ))
}

/// `component` with a `package-docs` custom section appended: the docs of
/// the WIT package in `wit_dir`, in wit-parser's format.
///
/// The section is keyed the way the built component decodes: a decoder
/// (`wasm-tools component wit`, wit-parser) names the component's world
/// `root`, whatever the WIT called it, and injects the docs by those names;
/// the tool's interface is inline in the world, so its functions' docs go
/// with it. A custom section may stand anywhere in a component, so it is
/// appended as it is, without re-encoding the rest.
fn with_package_docs(mut component: Vec<u8>, wit_dir: &Path) -> Result<Vec<u8>, String> {
    use wit_parser::{PackageMetadata, Resolve};

    let mut resolve = Resolve::new();
    let (package, _) = resolve
        .push_dir(wit_dir)
        .map_err(|e| format!("cannot read the WIT in {}: {e:#}", wit_dir.display()))?;
    let encoded = PackageMetadata::extract(&resolve, package)
        .encode()
        .map_err(|e| format!("cannot encode the WIT docs: {e:#}"))?;
    let (version, json) = encoded.split_first().ok_or("empty package-docs")?;
    let mut docs: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| format!("package-docs: {e}"))?;
    if let Some(serde_json::Value::Object(worlds)) = docs.get_mut("worlds") {
        let renamed: serde_json::Map<String, serde_json::Value> = std::mem::take(worlds)
            .into_iter()
            .map(|(_, world)| ("root".to_owned(), world))
            .collect();
        if renamed.len() > 1 {
            return Err("the WIT package must have one world".into());
        }
        *worlds = renamed;
    }
    let mut payload = vec![*version];
    payload.extend(serde_json::to_vec(&docs).map_err(|e| format!("package-docs: {e}"))?);

    let name = PackageMetadata::SECTION_NAME.as_bytes();
    let mut body = Vec::new();
    leb128(&mut body, name.len());
    body.extend_from_slice(name);
    body.extend_from_slice(&payload);
    component.push(0); // custom section
    leb128(&mut component, body.len());
    component.extend_from_slice(&body);
    Ok(component)
}

/// `value` as an unsigned LEB128 number, as the WebAssembly binary format
/// writes sizes.
fn leb128(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Panic messages name the source file they come from, and a dependency's
/// is under `CARGO_HOME`: the same component built on another machine (or
/// by another user) would differ by that path, and would show it. Mapped to
/// `/cargo`, the bytes are the same wherever the tree is built, which the
/// release's reproducibility rests on (`xtask/src/dist.rs`).
fn remap_cargo_home() -> String {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    format!("--remap-path-prefix={}=/cargo", home.display())
}

fn build_guest(out_dir: &Path) -> Result<PathBuf, String> {
    check_target_installed()?;
    let manifest_dir = manifest_dir()?;
    let workspace = manifest_dir
        .parent()
        .ok_or("host crate has no parent directory")?;
    let target_dir = out_dir.join("guest-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--release", "--package", GUEST, "--target", TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        // The guest's own build, tuned for speed: one codegen unit and
        // whole-program LTO across its dependencies (the diff and the JSON
        // parser inline into the glue), and WebAssembly SIMD, which every
        // current engine runs (wasmtime, V8, SpiderMonkey, JavaScriptCore)
        // and which `memchr` uses to split lines. These apply to this
        // nested build only, not to the host.
        .args(["--config", "profile.release.codegen-units=1"])
        .args(["--config", "profile.release.lto=true"])
        .arg("--config")
        .arg(format!(
            "target.wasm32-wasip2.rustflags=[\"-Ctarget-feature=+simd128\", {:?}]",
            remap_cargo_home()
        ));
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if key.starts_with("CARGO_PROFILE_")
            || key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_TARGET_")
            || matches!(
                key,
                "CARGO_ENCODED_RUSTFLAGS"
                    | "RUSTFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "CARGO_MAKEFLAGS"
                    | "CARGO_LLVM_COV"
                    | "LLVM_PROFILE_FILE"
            )
        {
            cmd.env_remove(key);
        }
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo to build the guest: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the guest component ({GUEST}) for {TARGET} failed"
        ));
    }

    let release = target_dir.join(TARGET).join("release");
    let wasm = release.join(format!("{ARTIFACT}.wasm"));
    let dep_info = release.join(format!("{ARTIFACT}.d"));
    for dep in dependencies(&dep_info)? {
        println!("cargo:rerun-if-changed={}", dep.display());
    }
    // Manifests decide features, profiles and versions, and the guest's
    // build script its link settings; the `.d` file does not list them.
    for manifest in [
        "Cargo.toml",
        "Cargo.lock",
        "core/Cargo.toml",
        "guest/Cargo.toml",
        "guest/build.rs",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(manifest).display()
        );
    }
    Ok(wasm)
}

/// `rustc --print target-libdir` prints a path even for a target that is not
/// installed, so check that the directory is there.
fn check_target_installed() -> Result<(), String> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || libdir.is_empty() || !Path::new(&libdir).is_dir() {
        return Err(format!(
            "the {TARGET} target is not installed; run `rustup target add {TARGET}` and build again"
        ));
    }
    Ok(())
}

/// Every path in a Makefile-style `.d` file (`out: dep dep …`).
fn dependencies(dep_info: &Path) -> Result<Vec<PathBuf>, String> {
    let text = fs::read_to_string(dep_info)
        .map_err(|e| format!("cannot read {}: {e}", dep_info.display()))?;
    let mut deps = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(": ") else {
            continue;
        };
        // Paths with spaces are escaped as `\ `.
        let mut current = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            deps.push(PathBuf::from(current));
        }
    }
    Ok(deps)
}
