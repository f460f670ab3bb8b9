//! Running cargo for hook builds: the toolchain it runs, its environment
//! (homes of its own, no agent-folder cargo configuration), its time limit,
//! reading its JSON messages, and turning its errors into problems.
//!
//! In `build` mode a hook's source is compiled on the host, and compiling
//! Rust runs code: a crate hook's `build.rs` and proc macros, and whatever
//! its dependencies bring. That is documented (docs/configuration.md); what
//! this module keeps out is everything else the host would lend the build:
//! the operator's environment, the user's home and cargo's and rustup's
//! homes in it, `.cargo/config.toml` files under the agent folder, and time
//! without end. `prebuilt` mode (see `hooks/build/component.rs`) never starts
//! cargo at all.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::hooks::cache::dir::create_private_dir;
use crate::hooks::problem::Problem;

/// The Rust toolchain hooks are built with (rust-toolchain.toml pins the same).
pub(crate) const HOOK_TOOLCHAIN: &str = "1.95.0";
/// The compilation target of every hook.
pub(crate) const HOOK_TARGET: &str = "wasm32-wasip2";
/// How long one cargo run (every stale Rust hook of a load, and their
/// dependencies on a cold cache) may take before its whole process group is
/// killed: a `build.rs` or proc macro that never ends would hang `hookrt
/// check` for ever. Longer than the script hooks' limit
/// (`toolchain::BUILD_TIMEOUT`) because one run compiles the SDK's
/// dependencies on a cold cache; `HOOKRT_CARGO_BUILD_TIMEOUT_S` overrides it.
pub(crate) const CARGO_BUILD_TIMEOUT: Duration = Duration::from_secs(600);
/// The variable that overrides [`CARGO_BUILD_TIMEOUT`], in seconds.
pub(crate) const CARGO_TIMEOUT_ENV: &str = "HOOKRT_CARGO_BUILD_TIMEOUT_S";

/// Where cargo builds and with what.
pub(crate) struct CargoSetup<'a> {
    /// The cache dir: the shared target dir and the build's homes are in it.
    pub(crate) cache_dir: &'a Path,
    /// The `hookrt-sdk` crate hooks are patched to.
    pub(crate) sdk_dir: &'a Path,
    /// The toolchain to build with (`RUSTUP_TOOLCHAIN` while it is found).
    pub(crate) toolchain: Option<&'a str>,
}

/// What cargo is given from the operator's environment, and nothing else: a
/// build script or proc macro of a hook runs with this environment, so host
/// secrets (tokens, keys in variables) must not be in it, nor can a hook
/// `env!` them into its component. `PATH` (the toolchain's `bin` first) for
/// the tools build scripts start; the offline switch and TLS roots for
/// cargo's downloads. Everything else cargo and rustc need is set by
/// [`BuildEnv`], never taken from the operator.
const PASSED_ENV: &[&str] = &["CARGO_NET_OFFLINE", "SSL_CERT_FILE", "SSL_CERT_DIR"];

/// The build's own homes, in the cache dir, and the toolchain it runs.
///
/// - `CARGO_HOME` is `<cache>/cargo-home`: the registry and git sources of
///   hook builds, and nothing of the user's (no credentials, no config);
///   the operator's `$CARGO_HOME/config.toml` (network settings) is still
///   read, handed to cargo as `--config FILE`, and never named in the
///   build's environment.
/// - `RUSTUP_HOME` is an empty folder: no rustup proxy runs in the build.
///   The toolchain is found once, before it (`rustc --print sysroot` as the
///   operator's rustup resolves [`CargoSetup::toolchain`]), and cargo and
///   rustc are run from its sysroot directly (`RUSTC`, `PATH`).
/// - `HOME` and `TMPDIR` are empty private folders, so `env!("HOME")` names
///   no folder of the user's.
pub(crate) struct BuildEnv {
    cargo: OsString,
    sysroot: PathBuf,
    cargo_home: PathBuf,
    rustup_home: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    target_dir: PathBuf,
    sdk_dir: PathBuf,
    operator_config: Option<PathBuf>,
    limit: Duration,
}

impl BuildEnv {
    /// Finds the toolchain and makes the build's homes; a problem when the
    /// toolchain cannot be found or a folder made.
    pub(crate) fn prepare(opts: &CargoSetup<'_>) -> Result<BuildEnv, Problem> {
        let sysroot = sysroot(opts.toolchain)?;
        let env_dir = opts.cache_dir.join("build-env");
        let folder = |dir: PathBuf| -> Result<PathBuf, Problem> {
            create_private_dir(&dir).map_err(|e| {
                Problem::build(
                    &dir,
                    format!("cannot create: {e}"),
                    "check permissions or pass another --cache-dir",
                )
            })?;
            Ok(dir)
        };
        let cargo = std::env::var_os("CARGO_BIN").unwrap_or_else(|| {
            let own = sysroot.join("bin").join("cargo");
            if own.is_file() {
                own.into()
            } else {
                "cargo".into()
            }
        });
        Ok(BuildEnv {
            cargo,
            cargo_home: folder(opts.cache_dir.join("cargo-home"))?,
            rustup_home: folder(env_dir.join("rustup"))?,
            home: folder(env_dir.join("home"))?,
            tmp: folder(env_dir.join("tmp"))?,
            // Made here: cargo makes a missing target dir through a temp
            // folder beside it, in the cache dir, which the kernel sandbox
            // does not let it write.
            target_dir: folder(opts.cache_dir.join("target"))?,
            sdk_dir: opts.sdk_dir.to_path_buf(),
            operator_config: operator_cargo_config(),
            sysroot,
            limit: std::env::var(CARGO_TIMEOUT_ENV)
                .ok()
                .and_then(|s| s.parse().ok())
                .map_or(CARGO_BUILD_TIMEOUT, Duration::from_secs),
        })
    }

    /// The folders every Rust hook's build may read (its own crate aside):
    /// see `hooks/build/depinfo.rs`.
    pub(crate) fn roots(&self) -> crate::hooks::build::depinfo::Roots {
        let mut roots = crate::hooks::build::depinfo::Roots::new([
            self.cargo_home.as_path(),
            self.sysroot.as_path(),
            self.target_dir.as_path(),
        ]);
        roots.add_with_links(&self.sdk_dir);
        roots
    }

    /// `cargo build` for hooks: release, the hook target, JSON messages,
    /// the shared target dir, the runtime's SDK, in the build's environment
    /// ([`BuildEnv::command`]).
    pub(crate) fn cargo(&self, own: &Path) -> Result<Command, Problem> {
        let mut cmd = self.command("build", own)?;
        cmd.args([
            "--release",
            "--target",
            HOOK_TARGET,
            "--message-format=json",
            "--keep-going",
            "--target-dir",
        ])
        .arg(&self.target_dir);
        Ok(cmd)
    }

    /// cargo's `subcommand` in the build's environment, with the runtime's
    /// SDK patched in: what `cargo build` runs with, and what writes a crate
    /// hook's `Cargo.lock` (`hooks/build/cargo_lock.rs`), so the lock is the
    /// one the build resolves.
    ///
    /// cargo reads `.cargo/config.toml` from its working directory and every
    /// folder above it, never from the manifest's folder: it runs in `/`, so
    /// the only such file it can read is `/.cargo/config.toml` (root's) and
    /// the one of its own home (none): no `.cargo/config.toml` of the agent
    /// folder, a crate hook, the cache dir or a folder above it (`/tmp`,
    /// where anyone could plant `build.rustc`, `linker` or a source
    /// replacement) takes effect. Every path cargo is given is absolute.
    /// Wrappers are switched off explicitly as well. It runs under the
    /// kernel sandbox (`hooks/build/kernel_sandbox.rs`), writing only
    /// beneath `own` (the crate or workspace it builds) and its own folders.
    pub(crate) fn command(&self, subcommand: &str, own: &Path) -> Result<Command, Problem> {
        let mut cmd = Command::new(&self.cargo);
        cmd.env_clear().current_dir("/");
        for key in PASSED_ENV {
            if let Some(v) = std::env::var_os(key) {
                cmd.env(key, v);
            }
        }
        let bin = self.sysroot.join("bin");
        let mut path = vec![bin.clone()];
        path.extend(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        );
        if let Ok(path) = std::env::join_paths(path) {
            cmd.env("PATH", path);
        }
        let rustc = bin.join("rustc");
        if rustc.is_file() {
            cmd.env("RUSTC", rustc);
        }
        cmd.env("CARGO_HOME", &self.cargo_home)
            .env("RUSTUP_HOME", &self.rustup_home)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp);
        cmd.arg(subcommand);
        if let Some(config) = &self.operator_config {
            cmd.arg("--config").arg(config);
        }
        cmd.args([
            "--config",
            "build.rustc-wrapper=\"\"",
            "--config",
            "build.rustc-workspace-wrapper=\"\"",
        ]);
        // Hooks depend on `hookrt-sdk = "0.4"` (`SDK_REQ`); this runtime supplies the SDK it
        // was built with, so crate hooks build wherever their folder lives.
        let sdk = toml::Value::String(self.sdk_dir.to_string_lossy().into_owned());
        cmd.arg("--config")
            .arg(format!("patch.crates-io.hookrt-sdk.path={sdk}"));
        self.confine(&mut cmd, own)?;
        Ok(cmd)
    }

    /// [`BuildEnv::command`]'s kernel sandbox: what `cmd` may read, and
    /// write (`own` and the build's folders).
    fn confine(&self, cmd: &mut Command, own: &Path) -> Result<(), Problem> {
        let sdk_links: Vec<PathBuf> = std::fs::read_dir(&self.sdk_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
            .filter_map(|e| e.path().canonicalize().ok())
            .collect();
        // The SDK inherits its edition and versions from the workspace it
        // lies in: cargo reads the manifests above it to find that root.
        let above_sdk: Vec<PathBuf> = self
            .sdk_dir
            .ancestors()
            .skip(1)
            .map(|dir| dir.join("Cargo.toml"))
            .collect();
        let mut read: Vec<&Path> = vec![&self.sdk_dir, &self.sysroot];
        read.extend(above_sdk.iter().map(PathBuf::as_path));
        read.extend(sdk_links.iter().map(PathBuf::as_path));
        read.extend(self.operator_config.as_deref());
        let write = [
            own,
            &self.cargo_home,
            &self.target_dir,
            &self.home,
            &self.tmp,
            &self.rustup_home,
        ];
        crate::hooks::build::kernel_sandbox::confine(cmd, &read, &write).map_err(|e| {
            Problem::build(
                own,
                format!("cannot set up the kernel sandbox of the build: {e}"),
                "report this as a bug of hookrt",
            )
        })
    }

    /// How long one cargo run may take.
    pub(crate) fn limit(&self) -> Duration {
        self.limit
    }
}

/// The operator's cargo configuration (`$CARGO_HOME/config.toml`, else
/// `~/.cargo/config.toml`), when there is one: its network settings still
/// hold for hook builds.
fn operator_cargo_config() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    ["config.toml", "config"]
        .iter()
        .map(|name| home.join(name))
        .find(|p| p.is_file())
}

/// The sysroot of the toolchain hooks are built with: `rustc --print
/// sysroot` as the operator's rustup resolves `toolchain` (in `/`, so no
/// `rust-toolchain.toml` of a folder decides).
fn sysroot(toolchain: Option<&str>) -> Result<PathBuf, Problem> {
    let rustc = "rustc";
    let mut cmd = Command::new(rustc);
    cmd.args(["--print", "sysroot"]).current_dir("/");
    if let Some(t) = toolchain {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    }
    let wanted = toolchain.unwrap_or("the default toolchain");
    let fix = format!(
        "install Rust with rustup (https://rustup.rs) and the toolchain: `rustup toolchain install {} --target {HOOK_TARGET}`",
        toolchain.unwrap_or(HOOK_TOOLCHAIN)
    );
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| {
        Problem::build(
            Path::new(rustc),
            format!("cannot start rustc to find {wanted}: {e}"),
            &fix,
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || text.is_empty() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Problem::build(
            Path::new(rustc),
            format!("cannot find the Rust toolchain {wanted}: {}", err.trim()),
            &fix,
        ));
    }
    Ok(PathBuf::from(text))
}

#[derive(Default)]
pub(crate) struct CargoRun {
    /// manifest path -> built .wasm
    pub(crate) artifacts: HashMap<PathBuf, PathBuf>,
    /// manifest path -> rendered compiler errors
    pub(crate) errors: HashMap<PathBuf, String>,
    /// The dep-info rustc wrote for each registry (not `path`) crate of the
    /// run, with the crate's folder (`hooks/build/depinfo.rs`).
    pub(crate) registry_depinfo: Vec<(PathBuf, PathBuf)>,
    /// last lines cargo wrote to stderr (resolution errors, missing target...)
    stderr_tail: String,
    spawn_error: Option<String>,
    /// The limit it ran past, when it was stopped.
    timed_out: Option<Duration>,
    /// How cargo ended, once it was reaped.
    status: Option<std::process::ExitStatus>,
}

impl CargoRun {
    /// Whether cargo ran to its end and exited 0.
    pub(crate) fn succeeded(&self) -> bool {
        self.timed_out.is_none() && self.status.is_some_and(|s| s.success())
    }

    /// The last lines cargo wrote to stderr (`Compiling` lines left out).
    pub(crate) fn stderr_tail(&self) -> &str {
        &self.stderr_tail
    }
}

/// Runs `cmd` (from [`BuildEnv::cargo`]) as the leader of a process group
/// of its own, at most `limit`: past it the whole group (cargo, rustc, build
/// scripts and what they started) is killed, and so is what is left of the
/// group when cargo ends.
pub(crate) fn run_cargo(
    mut cmd: Command,
    limit: Duration,
    compiled: &mut dyn FnMut(String),
) -> CargoRun {
    let mut run = CargoRun::default();
    tracing::debug!(?cmd, "starting cargo");
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
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
    let deadline = Instant::now() + limit;
    let stderr = child.stderr.take().map(|mut s| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            let _ = tx.send(text);
        });
        rx
    });
    let (lines_tx, lines) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left.min(Duration::from_millis(200))) {
            Ok(line) => read_message(&line, &mut run, compiled),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) if left.is_zero() => {
                run.timed_out = Some(limit);
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    // cargo closed its output (or ran out of time): it is waited for within
    // what is left of the limit, and never reaped before its group is
    // killed, so the group's id cannot have been taken by another process.
    while run.timed_out.is_none() && !exited(&child) {
        if Instant::now() >= deadline {
            run.timed_out = Some(limit);
        } else {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    run.status = kill_group(&mut child);
    let text = stderr
        .and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
        .unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("Compiling"))
        .collect();
    run.stderr_tail = lines[lines.len().saturating_sub(15)..].join("\n");
    run
}

/// Whether `child` has ended, leaving it unreaped (a zombie keeps its id,
/// and so its process group's, from being reused).
fn exited(child: &Child) -> bool {
    let pid: libc::id_t = child.id();
    // SAFETY: `siginfo_t` is plain data, zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: a plain system call on our own child, with a valid out pointer.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: `waitid` filled `info` (or left it zeroed: no child ended).
    rc != 0 || unsafe { info.si_pid() } != 0
}

/// Kills what is left of the build's process group, then reaps cargo.
fn kill_group(child: &mut Child) -> Option<std::process::ExitStatus> {
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: a plain system call; cargo leads its own group
        // (`process_group(0)`) and is not reaped yet, so only the build is
        // signalled.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    child.wait().ok()
}

/// Takes one JSON message of cargo's into `run`.
fn read_message(line: &str, run: &mut CargoRun, compiled: &mut dyn FnMut(String)) {
    let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
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
            let files: Vec<&str> = msg["filenames"]
                .as_array()
                .map(|f| f.iter().filter_map(|f| f.as_str()).collect())
                .unwrap_or_default();
            let wasm = files.iter().find(|f| f.ends_with(".wasm"));
            if let (true, Some(wasm), Some(m)) = (is_cdylib, wasm, &manifest) {
                run.artifacts.insert(m.clone(), PathBuf::from(wasm));
            }
            let id = msg["package_id"].as_str().unwrap_or("");
            let local = id.starts_with("path+") || id.contains("(path+");
            if let (false, Some(m)) = (local, &manifest) {
                let dir = m.parent().unwrap_or(m).to_path_buf();
                for d in rustc_depinfo(&files) {
                    if !run.registry_depinfo.iter().any(|(have, _)| *have == d) {
                        run.registry_depinfo.push((d, dir.clone()));
                    }
                }
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

/// The dep-info files rustc wrote beside the outputs `files` of one crate
/// (`deps/libserde-<hash>.rlib` -> `deps/serde-<hash>.d`;
/// `build/x-<hash>/build_script_build-<hash>` -> `…-<hash>.d`).
fn rustc_depinfo(files: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for file in files {
        let file = Path::new(file);
        let Some(stem) = file.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let names = [stem.strip_prefix("lib").unwrap_or(stem), stem];
        for name in names {
            let d = file.with_file_name(format!("{name}.d"));
            if d.is_file() && !found.contains(&d) {
                found.push(d);
            }
        }
    }
    found
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
    if let Some(limit) = run.timed_out {
        return Problem::build(
            path,
            format!(
                "cargo ran longer than {} s building it and was stopped (with everything it started)",
                limit.as_secs()
            ),
            format!(
                "make the hook's build code end (a `build.rs` or proc macro runs while it is built), or raise {CARGO_TIMEOUT_ENV}"
            ),
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
