//! Running cargo for hook builds: the command (scrubbed environment, no
//! agent-folder cargo configuration), reading its JSON messages, and turning
//! its errors into problems.
//!
//! In `build` mode a hook's source is compiled on the host, and compiling
//! Rust runs code: a crate hook's `build.rs` and proc macros, and whatever
//! its dependencies bring. That is documented (docs/configuration.md); what
//! this module keeps out is everything else the host would lend the build:
//! the operator's environment and `.cargo/config.toml` files under the agent
//! folder. `prebuilt` mode (see `hooks/build/component.rs`) never starts cargo at all.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::hooks::problem::Problem;

/// The Rust toolchain hooks are built with (rust-toolchain.toml pins the same).
pub const HOOK_TOOLCHAIN: &str = "1.95.0";
/// The compilation target of every hook.
pub const HOOK_TARGET: &str = "wasm32-wasip2";

/// Where cargo builds and with what.
pub(crate) struct CargoSetup<'a> {
    /// The cache dir: cargo's working directory, with the shared target dir in it.
    pub(crate) cache_dir: &'a Path,
    /// The `hookrt-sdk` crate hooks are patched to.
    pub(crate) sdk_dir: &'a Path,
    /// `RUSTUP_TOOLCHAIN` for cargo.
    pub(crate) toolchain: Option<&'a str>,
}

/// What cargo and rustup need from the environment, and nothing else: a
/// build script or proc macro of a hook runs with this environment, so host
/// secrets (tokens, keys in variables) must not be in it, nor can a hook
/// `env!` them into its component. Not even `HOME`: cargo and rustup are
/// given their own homes (`CARGO_HOME`, `RUSTUP_HOME`, from the
/// environment or `$HOME/.cargo` and `$HOME/.rustup`), and `HOME` is the
/// cache dir, so `env!("HOME")` names no folder of the user's. Network
/// settings belong in `$CARGO_HOME/config.toml`, which cargo still reads.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "RUSTUP_AUTO_INSTALL",
    "TMPDIR",
    "CARGO_NET_OFFLINE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// `cargo build` for hooks: release, the hook target, JSON messages, the
/// shared target dir, the runtime's SDK, in a scrubbed environment.
///
/// cargo reads `.cargo/config.toml` from its working directory and every
/// folder above it, never from the manifest's folder: it runs in `/`, so
/// the only such file it can read is `/.cargo/config.toml` (root's) and
/// `$CARGO_HOME/config.toml` (the operator's): no `.cargo/config.toml` of
/// the agent folder, a crate hook, the cache dir or a folder above it
/// (`/tmp`, where anyone could plant `build.rustc`, `linker` or a source
/// replacement) takes effect. Every path cargo is given is absolute, and
/// the toolchain is named by `RUSTUP_TOOLCHAIN`, not found from the cwd.
/// Wrappers are switched off explicitly as well.
pub(crate) fn cargo(opts: &CargoSetup<'_>) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO_BIN").unwrap_or_else(|| "cargo".into()));
    cmd.env_clear().current_dir("/");
    for key in PASSED_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for (key, below_home) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        let dir = std::env::var_os(key)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(below_home)));
        if let Some(dir) = dir {
            cmd.env(key, dir);
        }
    }
    cmd.env("HOME", opts.cache_dir);
    if let Some(t) = opts.toolchain {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    } else if let Some(t) = std::env::var_os("RUSTUP_TOOLCHAIN") {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    }
    cmd.args([
        "build",
        "--release",
        "--target",
        HOOK_TARGET,
        "--message-format=json",
        "--keep-going",
        "--config",
        "build.rustc-wrapper=\"\"",
        "--config",
        "build.rustc-workspace-wrapper=\"\"",
        "--target-dir",
    ])
    .arg(opts.cache_dir.join("target"));
    // Hooks depend on `hookrt-sdk = "0.3"` (`SDK_REQ`); this runtime supplies the SDK it
    // was built with, so crate hooks build wherever their folder lives.
    let sdk = toml::Value::String(opts.sdk_dir.to_string_lossy().into_owned());
    cmd.arg("--config")
        .arg(format!("patch.crates-io.hookrt-sdk.path={sdk}"));
    cmd
}

#[derive(Default)]
pub(crate) struct CargoRun {
    /// manifest path -> built .wasm
    pub(crate) artifacts: HashMap<PathBuf, PathBuf>,
    /// manifest path -> rendered compiler errors
    pub(crate) errors: HashMap<PathBuf, String>,
    /// last lines cargo wrote to stderr (resolution errors, missing target...)
    stderr_tail: String,
    spawn_error: Option<String>,
}

pub(crate) fn run_cargo(mut cmd: Command, compiled: &mut dyn FnMut(String)) -> CargoRun {
    let mut run = CargoRun::default();
    tracing::debug!(?cmd, "starting cargo");
    let mut child = match cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            run.spawn_error = Some(format!("cannot start cargo: {e}"));
            return run;
        }
    };
    let stderr = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            text
        })
    });
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let manifest = msg["manifest_path"]
                .as_str()
                .map(|p| canonical(Path::new(p)));
            match msg["reason"].as_str() {
                Some("compiler-artifact") => {
                    let name = msg["target"]["name"].as_str().unwrap_or("").to_owned();
                    let is_cdylib = msg["target"]["kind"]
                        .as_array()
                        .is_some_and(|k| k.iter().any(|k| k == "cdylib"));
                    let wasm = msg["filenames"].as_array().and_then(|f| {
                        f.iter()
                            .filter_map(|f| f.as_str())
                            .find(|f| f.ends_with(".wasm"))
                    });
                    if let (true, Some(wasm), Some(m)) = (is_cdylib, wasm, manifest) {
                        run.artifacts.insert(m, PathBuf::from(wasm));
                    }
                    compiled(name);
                }
                Some("compiler-message") if msg["message"]["level"] == "error" => {
                    if let (Some(m), Some(text)) = (manifest, msg["message"]["rendered"].as_str()) {
                        run.errors.entry(m).or_default().push_str(text);
                    }
                }
                _ => {}
            }
        }
    }
    let _ = child.wait();
    let text = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("Compiling"))
        .collect();
    run.stderr_tail = lines[lines.len().saturating_sub(15)..].join("\n");
    run
}

pub(crate) fn compile_problem(
    path: &Path,
    run: &CargoRun,
    errors: Option<&String>,
    generated: Option<&Path>,
) -> Problem {
    if let Some(e) = &run.spawn_error {
        return Problem::build(
            path,
            e.clone(),
            "install Rust with rustup (https://rustup.rs) so `cargo` is on PATH",
        );
    }
    let mut detail = errors.cloned().unwrap_or_else(|| run.stderr_tail.clone());
    if let Some(g) = generated {
        // cargo prints the generated file absolute or relative to the workspace.
        let original = path.to_string_lossy();
        detail = detail.replace(&*g.to_string_lossy(), &original);
        let parts: Vec<_> = g.components().rev().take(4).collect();
        let relative: std::path::PathBuf = parts.into_iter().rev().collect();
        detail = detail.replace(&*relative.to_string_lossy(), &original);
    }
    let fix = if detail.contains(HOOK_TARGET)
        && (detail.contains("target may not be installed")
            || detail.contains("can't find crate for `core`"))
    {
        format!(
            "install the target: `rustup target add {HOOK_TARGET} --toolchain {HOOK_TOOLCHAIN}`"
        )
    } else {
        "fix the errors shown; `hookrt build` rebuilds only what changed".to_owned()
    };
    Problem::build(
        path,
        format!("does not build into a component:\n{}", detail.trim_end()),
        fix,
    )
}

pub(crate) fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

pub(crate) fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
