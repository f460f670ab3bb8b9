//! Writing a crate hook's `Cargo.lock` as hookrt's build resolves it.
//!
//! cargo builds crate hooks `--locked` (`hooks/build/crate_inputs.rs` says
//! why), so the lock must be the one the build would resolve: the SDK this
//! hookrt supplies patched in, and the versions the SDK's own dependencies
//! need. Writing it runs `cargo fetch` in the build's environment
//! (`hooks/build/cargo.rs`: its homes, the SDK patch, no agent-folder cargo
//! configuration, the kernel sandbox, the time limit): it writes a missing
//! lock, updates a stale one as little as it can (pinned versions stay
//! while they still fit), leaves a matching one alone, and downloads the
//! sources the lock names into the cache's cargo home, from the network
//! when they are not there yet, as a first build would (`CARGO_NET_OFFLINE`
//! holds for both). `hookrt lock` runs it before it pins a folder, and
//! `hookrt new --crate` for the crate it writes.

use std::path::{Path, PathBuf};

use crate::hooks::build::cargo::{BuildEnv, HOOK_TARGET, absolute, run_cargo};
use crate::hooks::build::component::BuildOptions;
use crate::hooks::build::crate_inputs::CARGO_LOCK;
use crate::hooks::build::digest::files_digest;
use crate::hooks::cache::dir::BuildLock;
use crate::hooks::folder::config::{Config, Mode};
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::folder::plain::read_regular;
use crate::hooks::problem::{Problem, Problems};

/// What writing one crate hook's `Cargo.lock` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CargoLockChange {
    /// There was none: it was written.
    Written,
    /// It did not match what the build resolves: it was updated.
    Updated,
    /// It matched: left as it was.
    Unchanged,
}

/// One crate hook's `Cargo.lock` and what was done to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoLockWrite {
    /// The crate hook's `Cargo.lock`.
    pub path: PathBuf,
    /// What was done to it.
    pub change: CargoLockChange,
}

/// Writes the `Cargo.lock` of every crate hook of `agent_dir` that has none
/// or whose lock does not match what the build resolves (see the module
/// doc). Nothing runs in `prebuilt` mode (the operator's or the folder's),
/// which never starts cargo. Every crate's problem is reported together.
pub fn write_cargo_locks(
    agent_dir: &Path,
    opts: &BuildOptions,
) -> Result<Vec<CargoLockWrite>, Problems> {
    let config = Config::load(agent_dir)?;
    let discovery = config.discover(agent_dir)?;
    let crates: Vec<&DiscoveredHook> = discovery
        .hooks
        .iter()
        .filter(|h| h.kind == SourceKind::Crate)
        .collect();
    if crates.is_empty() || opts.prebuilt || config.mode == Mode::Prebuilt {
        return Ok(Vec::new());
    }
    let (_lock, env) = prepare(opts).map_err(|p| Problems(vec![p]))?;
    let (mut written, mut problems) = (Vec::new(), Vec::new());
    for hook in crates {
        match write_one(hook, &env) {
            Ok(w) => written.push(w),
            Err(p) => problems.push(p),
        }
    }
    Problems(problems).into_result()?;
    Ok(written)
}

/// Writes the `Cargo.lock` of the crate hook `hook` as
/// [`write_cargo_locks`] does (`hookrt new --crate`, for the crate it wrote).
pub fn write_cargo_lock(
    hook: &DiscoveredHook,
    opts: &BuildOptions,
) -> Result<CargoLockWrite, Problem> {
    let (_lock, env) = prepare(opts)?;
    write_one(hook, &env)
}

/// The cache's build lock, held while cargo writes in the cache, and the
/// build's environment (every path absolute: cargo runs in `/`).
fn prepare(opts: &BuildOptions) -> Result<(BuildLock, BuildEnv), Problem> {
    let opts = BuildOptions {
        cache_dir: absolute(&opts.cache_dir),
        sdk_dir: absolute(&opts.sdk_dir),
        ..opts.clone()
    };
    let lock = BuildLock::acquire(&opts.cache_dir)?;
    Ok((lock, BuildEnv::prepare(&opts.setup())?))
}

/// `cargo fetch` for one crate hook, first refused as its build would be
/// (a `target/` folder, a path out of the crate: `crate_inputs.rs`).
fn write_one(hook: &DiscoveredHook, env: &BuildEnv) -> Result<CargoLockWrite, Problem> {
    let dir = absolute(&hook.path);
    let path = dir.join(CARGO_LOCK);
    files_digest(hook).map_err(|e| {
        Problem::build(
            &hook.path,
            format!("cannot read source: {e}"),
            "check permissions",
        )
    })?;
    let before = read_regular(&path).ok();
    let mut cmd = env.command("fetch", &dir)?;
    cmd.args(["--target", HOOK_TARGET, "--manifest-path"])
        .arg(dir.join("Cargo.toml"));
    let run = run_cargo(cmd, env.limit(), &mut |_| {});
    if !run.succeeded() {
        return Err(Problem::build(
            &path,
            format!(
                "cargo could not resolve the dependencies of crate hook `{}` with this hookrt's SDK:\n{}",
                hook.slug,
                run.stderr_tail().trim_end()
            ),
            "fix its Cargo.toml (it depends on `hookrt-sdk` and crates cargo can find); cargo needs the network the first time it resolves a dependency, unless CARGO_NET_OFFLINE is set and the cache has it",
        ));
    }
    let after = read_regular(&path).map_err(|e| {
        Problem::build(
            &path,
            format!("cargo wrote no readable Cargo.lock: {e}"),
            "check permissions of the hook's folder",
        )
    })?;
    let change = match before {
        None => CargoLockChange::Written,
        Some(b) if b == after => CargoLockChange::Unchanged,
        Some(_) => CargoLockChange::Updated,
    };
    Ok(CargoLockWrite { path, change })
}
