//! Builds the guest component for `wasm32-wasip2` and embeds it.
//!
//! The wasmtime way (`crates/gdbstub-component/artifact/build.rs`): a nested
//! `cargo build` with its own target directory under `OUT_DIR` (sharing the
//! outer one deadlocks), with the outer build's flags and wrappers removed so
//! that they do not leak into a build for another target. The `.d` file of
//! the nested build names every source it read, and each becomes a
//! `rerun-if-changed`.
//!
//! Set `WRITE_TOOL_GUEST_WASM` to a prebuilt component to skip the nested
//! build.

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
    fs::copy(&wasm, &embedded).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            wasm.display(),
            embedded.display()
        )
    })?;
    Ok(())
}

fn build_guest(out_dir: &Path) -> Result<PathBuf, String> {
    check_target_installed()?;
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?);
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
        .args([
            "--config",
            "target.wasm32-wasip2.rustflags=[\"-Ctarget-feature=+simd128\"]",
        ]);
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
