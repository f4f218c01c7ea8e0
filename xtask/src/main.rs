//! `cargo xtask`: the release's commands.
//!
//! ```sh
//! cargo xtask dist --out dist                     # every artifact, and dist.json
//! cargo xtask push dist --to HOST[:PORT]/REPO:TAG [--sign-key cosign.key]
//! cargo xtask verify oci://HOST[:PORT]/REPO:TAG --key cosign.pub [--out write_tool.wasm]
//! ```

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, push, sign and verify write-tool's release"
)]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Build every artifact into DIR and list them in DIR/dist.json.
    Dist {
        /// The folder to build into: new, empty, or an earlier dist.
        #[arg(long)]
        out: PathBuf,
        /// The `write-tool` binary to ship (default: a release build of
        /// this tree, made first).
        #[arg(long)]
        binary: Option<PathBuf>,
        /// The Python that builds the wheel.
        #[arg(long, default_value = "python3")]
        python: PathBuf,
    },
    /// Push a dist's OCI artifact to a registry; sign it with --sign-key.
    Push {
        /// A dist folder (or the OCI image layout in it).
        dist: PathBuf,
        /// HOST[:PORT]/REPO:TAG. Plain HTTP only on a loopback address.
        #[arg(long)]
        to: String,
        /// A PEM PKCS #8 ECDSA P-256 private key: sign as cosign does.
        #[arg(long)]
        sign_key: Option<PathBuf>,
    },
    /// Check an artifact's signature and every blob's digest.
    Verify {
        /// oci://HOST[:PORT]/REPO:TAG (or @sha256:…)
        reference: String,
        /// The PEM public key (cosign.pub).
        #[arg(long)]
        key: PathBuf,
        /// Where to write the component once every check passed.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))
}

fn run(task: Task) -> Result<()> {
    match task {
        Task::Dist {
            out,
            binary,
            python,
        } => {
            let workspace = workspace();
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| workspace.join("target"), PathBuf::from);
            let binary = match binary {
                Some(binary) => binary,
                None => release_binary(&workspace, &target)?,
            };
            let options = xtask::Options {
                out,
                binary,
                epoch: xtask::release::source_date_epoch(&workspace)?,
                work: target.join("xtask"),
                python,
                workspace,
            };
            xtask::dist(&options, &mut |line| say(line))?;
        }
        Task::Push { dist, to, sign_key } => {
            let layout = if dist.join("oci/index.json").is_file() {
                dist.join("oci")
            } else {
                dist
            };
            let key = sign_key.as_deref().map(read).transpose()?;
            let published = xtask::registry::push(&layout, &to, key.as_deref())?;
            say(&format!(
                "pushed {} {}",
                published.reference, published.digest
            ));
            if let Some(tag) = published.signature {
                say(&format!("signed {tag}"));
            }
        }
        Task::Verify {
            reference,
            key,
            out,
        } => {
            let verified = xtask::registry::verify(&reference, &read(&key)?)?;
            if let Some(out) = out {
                std::fs::write(&out, &verified.component)
                    .with_context(|| format!("write {}", out.display()))?;
            }
            say(&format!(
                "verified {reference} {} (component {})",
                verified.digest, verified.component_digest
            ));
        }
    }
    Ok(())
}

/// The release build of the CLI, made now.
fn release_binary(workspace: &Path, target: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args([
            "build",
            "--release",
            "--locked",
            "--package",
            "write-tool",
            "--bin",
            "write-tool",
        ])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        anyhow::bail!("the release build of write-tool failed");
    }
    Ok(target.join("release/write-tool"))
}
