//! Build: turning hook sources into components with the guest SDK.
//!
//! Two modes, chosen explicitly. `build` (the default): single-file hooks
//! become members of one generated cargo workspace under the cache dir; crate
//! hooks are built from their folder; TypeScript/JavaScript hooks are built by
//! componentize-js (`hooks/build/typescript.rs`), which runs none of their code on
//! the host. Compiling Rust runs the source's build
//! code on the host (`build.rs`, proc macros), so cargo gets a scrubbed
//! environment and no agent-folder cargo configuration (`hooks/build/cargo.rs`).
//! `prebuilt` (`--prebuilt`, `mode = "prebuilt"`): the agent folder holds
//! components only, cargo never starts, any source hook is a problem, and no
//! SDK checkout is needed.
//!
//! Everything shares one target dir, so dependencies (the SDK, serde) compile
//! once and rebuilds are incremental. Outputs are keyed by a hash of the
//! source, the SDK and the toolchain: an unchanged hook never starts cargo.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::hooks::build::cargo::{
    BuildEnv, CargoRun, CargoSetup, HOOK_TARGET, HOOK_TOOLCHAIN, absolute, canonical,
    compile_problem, run_cargo,
};
use crate::hooks::build::depinfo::{self, Roots};
use crate::hooks::build::digest::{Sdk, single_file_hash, source_hash};
use crate::hooks::build::{confine, crate_inputs, python, typescript};
use crate::hooks::cache::dir::{self, BuildLock, create_private_dir};
use crate::hooks::cache::{pack, stamp};
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind, agent_dir_of};
use crate::hooks::folder::packs;
use crate::hooks::folder::plain;
use crate::hooks::problem::Problem;

/// The version requirement hooks use for `hookrt-sdk`.
pub const SDK_REQ: &str = "0.4";
/// The SDK this runtime was built next to; `HOOKRT_SDK_DIR` overrides it.
pub(crate) const DEFAULT_SDK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guest-sdk");

/// Where and how hooks are built.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Cache root: generated workspace, shared target dir, components, artifacts.
    pub cache_dir: PathBuf,
    /// The `hookrt-sdk` crate single-file hooks depend on.
    pub sdk_dir: PathBuf,
    /// `RUSTUP_TOOLCHAIN` for cargo (`None`: whatever `cargo` resolves to).
    pub toolchain: Option<String>,
    /// Load components only: never start cargo; a source hook is a problem.
    /// `mode = "prebuilt"` in `hookrt.toml` turns it on as well.
    pub prebuilt: bool,
    /// Refuse hooks that drifted from `hookrt.lock` (when the folder has one).
    /// Off only to inspect or re-lock a folder (`hookrt audit`, `hookrt lock`).
    pub enforce_lock: bool,
    /// Where the lock is and whether it must be there (`--lock FILE`,
    /// `--require-lock`).
    pub lock: LockPolicy,
    /// Use what is built, never build: a hook whose component is not in the
    /// cache (never built, or changed since) is a problem naming the command
    /// that builds it; cargo and the JS toolchain never start and the build
    /// lock is never waited on. For a caller with a deadline of its own
    /// (`hookrt claude-hook`, which Claude Code times out).
    pub cached_only: bool,
    /// The runtime delivers one event and exits (an agent's command hook):
    /// hooks get their memory on demand, not from a pool of instance slots,
    /// whose set-up costs more than it saves a few instantiations.
    pub one_shot: bool,
    /// The project folder of the grants that act on it (`--project-dir`);
    /// `None`: hookrt's working directory ([`crate::hooks::Project::decide`]).
    pub project: Option<PathBuf>,
}

/// Where the lock is read from and whether it must be there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockPolicy {
    /// The lock file (`--lock FILE`); `None`: `hookrt.lock` in the agent folder.
    pub file: Option<PathBuf>,
    /// A missing lock is a refusal (`--require-lock`), not a warning.
    pub required: bool,
}

impl LockPolicy {
    /// The lock file of `agent_dir` under this policy.
    pub fn path(&self, agent_dir: &Path) -> PathBuf {
        self.file
            .clone()
            .unwrap_or_else(|| agent_dir.join(crate::hooks::folder::config::LOCK_FILE))
    }
}

impl BuildOptions {
    /// Defaults for an agent folder: `build` mode, the per-user cache dir
    /// (outside every agent folder, see `hooks/cache/dir.rs`), lock enforced.
    pub fn for_agent(_agent_dir: &Path) -> BuildOptions {
        BuildOptions {
            cache_dir: dir::default_cache_dir(),
            sdk_dir: std::env::var_os("HOOKRT_SDK_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SDK_DIR)),
            toolchain: Some(
                std::env::var("HOOKRT_TOOLCHAIN").unwrap_or_else(|_| HOOK_TOOLCHAIN.to_owned()),
            ),
            prebuilt: false,
            enforce_lock: true,
            lock: LockPolicy::default(),
            cached_only: false,
            one_shot: false,
            project: None,
        }
    }

    pub(crate) fn setup(&self) -> CargoSetup<'_> {
        CargoSetup {
            cache_dir: &self.cache_dir,
            sdk_dir: &self.sdk_dir,
            toolchain: self.toolchain.as_deref(),
        }
    }
}

/// Progress of a build, for a progress bar.
#[derive(Debug, Clone)]
pub enum BuildEvent {
    /// `stale` hooks need cargo; the rest are cached.
    Planned {
        /// How many hooks cargo will build.
        stale: usize,
        /// How many were up to date.
        cached: usize,
    },
    /// cargo finished compiling one crate (a dependency or a hook).
    CrateCompiled(String),
    /// componentize-js or componentize-py finished building one TypeScript,
    /// JavaScript or Python hook (its slug).
    Componentized(String),
}

/// A hook with a component on disk.
#[derive(Debug, Clone)]
pub struct BuiltHook {
    /// What was discovered.
    pub hook: DiscoveredHook,
    /// The component file.
    pub component: PathBuf,
    /// Digest of what the component was built from.
    pub source_sha256: String,
    /// True when cargo built it in this call.
    pub compiled: bool,
}

/// Builds every stale hook; returns the built ones and a problem per failure.
pub fn build(
    hooks: &[DiscoveredHook],
    opts: &BuildOptions,
    progress: &mut dyn FnMut(BuildEvent),
) -> (Vec<BuiltHook>, Vec<Problem>) {
    if opts.prebuilt {
        return prebuilt(hooks, &opts.cache_dir);
    }
    // cargo runs in other folders: every path handed to it must be absolute.
    let opts = &BuildOptions {
        cache_dir: absolute(&opts.cache_dir),
        sdk_dir: absolute(&opts.sdk_dir),
        ..opts.clone()
    };
    let components_dir = opts.cache_dir.join("components");
    let key = match dir::mac_key(&opts.cache_dir) {
        Ok(k) => k,
        Err(e) => {
            let fix = "check permissions or pass another --cache-dir";
            let message = format!("cannot set up the cache key: {e}");
            return (
                Vec::new(),
                vec![Problem::build(&opts.cache_dir, message, fix)],
            );
        }
    };
    let sdks = match Sdks::of(hooks, opts, &key) {
        Ok(s) => s,
        Err(p) => return (Vec::new(), vec![p]),
    };
    let mut problems = Vec::new();
    let (mut built, stale) = plan(hooks, &sdks, opts, &components_dir, &key, &mut problems);
    progress(BuildEvent::Planned {
        stale: stale.len(),
        cached: built.len(),
    });
    if stale.is_empty() {
        return (built, problems);
    }
    if opts.cached_only {
        for Stale { hook, .. } in stale {
            problems.push(Problem::build(
                &hook.path,
                "is not built (or changed since it was built), and this command never builds",
                format!(
                    "build the folder first: `hookrt build {}`",
                    agent_dir_of(&hook.path).display()
                ),
            ));
        }
        return (built, problems);
    }
    let (more, more_problems) = build_stale(stale, &sdks, opts, &components_dir, &key, progress);
    built.extend(more);
    problems.extend(more_problems);
    (built, problems)
}

/// Builds the hooks `plan` found stale, under the cache's build lock: the
/// TypeScript and Python ones componentized, the Rust ones by cargo (the
/// single files together). Those another process built meanwhile are taken
/// as they are.
fn build_stale(
    stale: Vec<Stale>,
    sdks: &Sdks,
    opts: &BuildOptions,
    components_dir: &Path,
    key: &[u8],
    progress: &mut dyn FnMut(BuildEvent),
) -> (Vec<BuiltHook>, Vec<Problem>) {
    let (mut built, mut problems) = (Vec::new(), Vec::new());
    if let Err(e) = create_private_dir(components_dir) {
        problems.push(Problem::build(
            components_dir,
            format!("cannot create: {e}"),
            "check permissions or pass another --cache-dir",
        ));
        return (built, problems);
    }
    let _lock = match BuildLock::acquire(&opts.cache_dir) {
        Ok(l) => l,
        Err(p) => {
            problems.push(p);
            return (built, problems);
        }
    };
    // Another process may have built some of them while we waited for the lock.
    let (done, stale): (Vec<_>, Vec<_>) = stale
        .into_iter()
        .partition(|s| cached(&components_dir.join(format!("{}.wasm", s.hash)), key));
    built.extend(done.into_iter().map(|Stale { hook, hash, .. }| BuiltHook {
        hook,
        component: components_dir.join(format!("{hash}.wasm")),
        source_sha256: hash,
        compiled: false,
    }));
    let (scripts, stale): (Vec<_>, Vec<_>) = stale
        .into_iter()
        .partition(|s| matches!(s.hook.kind, SourceKind::TypeScript | SourceKind::Python));
    for Stale { hook, hash, .. } in scripts {
        match build_script(hook, hash, opts, components_dir, key) {
            Ok(b) => {
                progress(BuildEvent::Componentized(b.hook.slug.to_string()));
                built.push(b);
            }
            Err(p) => problems.push(p),
        }
    }
    if stale.is_empty() {
        return (built, problems);
    }
    let env = match BuildEnv::prepare(&opts.setup()) {
        Ok(env) => env,
        Err(p) => {
            problems.push(p);
            return (built, problems);
        }
    };
    let (singles, crates): (Vec<_>, Vec<_>) = stale
        .into_iter()
        .partition(|s| s.hook.kind == SourceKind::SingleFile);
    if !singles.is_empty() {
        build_single_files(
            singles,
            opts,
            &env,
            components_dir,
            key,
            progress,
            &mut built,
            &mut problems,
        );
    }
    for Stale { hook, hash, .. } in crates {
        match build_crate(
            hook,
            hash,
            &sdks.rust,
            opts,
            &env,
            components_dir,
            key,
            progress,
        ) {
            Ok(b) => built.push(b),
            Err(p) => problems.push(p),
        }
    }
    (built, problems)
}

/// The fingerprints of the SDKs the hooks are built against: the Rust SDK
/// (with the toolchain), the TypeScript one and the Python one.
struct Sdks {
    rust: String,
    ts: String,
    py: String,
}

impl Sdks {
    /// Only the SDKs the hooks need are read (a process per event with three
    /// Rust hooks hashed all three SDKs' ~45 files before): one that is
    /// missing is a problem then.
    /// Each taken from its stamp in the cache while no file of it changed.
    fn of(hooks: &[DiscoveredHook], opts: &BuildOptions, key: &[u8]) -> Result<Sdks, Problem> {
        let needs = |kinds: &[SourceKind]| hooks.iter().any(|h| kinds.contains(&h.kind));
        let fingerprint = |kinds: &[SourceKind], of: fn(&Path) -> Result<Sdk, Problem>| {
            if needs(kinds) {
                of(&opts.sdk_dir)?.fingerprint(&opts.cache_dir, key)
            } else {
                Ok(String::new())
            }
        };
        Ok(Sdks {
            rust: fingerprint(&[SourceKind::SingleFile, SourceKind::Crate], Sdk::rust)?,
            ts: fingerprint(&[SourceKind::TypeScript], Sdk::ts)?,
            py: fingerprint(&[SourceKind::Python], Sdk::python)?,
        })
    }
}

/// A hook whose component is not in the cache.
struct Stale {
    hook: DiscoveredHook,
    /// The digest its component will have.
    hash: String,
    /// A single-file hook's source as it was read once: hashed, scanned,
    /// and written into its generated crate (never read again).
    source: Option<Vec<u8>>,
}

/// Each hook's source digest: the hooks whose component is in the cache
/// (built), and the stale ones with the digest their component will have.
fn plan(
    hooks: &[DiscoveredHook],
    sdks: &Sdks,
    opts: &BuildOptions,
    components_dir: &Path,
    key: &[u8],
    problems: &mut Vec<Problem>,
) -> (Vec<BuiltHook>, Vec<Stale>) {
    let mut built = Vec::new();
    let mut stale = Vec::new();
    for hook in hooks {
        if let Some(p) = (hook.kind == SourceKind::Crate)
            .then(|| crate_inputs::missing_cargo_lock(hook))
            .flatten()
        {
            problems.push(p);
            continue;
        }
        let mut source = None;
        let hashed = match hook.kind {
            SourceKind::TypeScript => source_hash(hook, &sdks.ts, None),
            SourceKind::Python => source_hash(hook, &sdks.py, None),
            SourceKind::SingleFile => plain::read_regular(&hook.path).map(|bytes| {
                let hash = single_file_hash(&bytes, &sdks.rust, opts.toolchain.as_deref());
                source = Some(bytes);
                hash
            }),
            _ => source_hash(hook, &sdks.rust, opts.toolchain.as_deref()),
        };
        let hash = match hashed {
            Ok(h) => h,
            Err(e) => {
                problems.push(Problem::build(
                    &hook.path,
                    format!("cannot read source: {e}"),
                    "check permissions",
                ));
                continue;
            }
        };
        if let Some(problem) = source.as_deref().and_then(|s| reads_the_host(hook, s)) {
            problems.push(problem);
            continue;
        }
        let (out, ready) = if let Some(pack) = packs::pack_of(hook) {
            match pack::component_file(pack, &opts.cache_dir) {
                Ok(file) => (file, true),
                Err(e) => {
                    problems.push(pack_problem(hook, &e));
                    continue;
                }
            }
        } else if hook.kind == SourceKind::Component {
            (hook.path.clone(), hook.path.is_file())
        } else {
            let out = components_dir.join(format!("{hash}.wasm"));
            let ready = cached(&out, key);
            (out, ready)
        };
        if ready {
            built.push(BuiltHook {
                hook: hook.clone(),
                component: out,
                source_sha256: hash,
                compiled: false,
            });
        } else {
            stale.push(Stale {
                hook: hook.clone(),
                hash,
                source,
            });
        }
    }
    (built, stale)
}

/// The problem of a single-file hook whose source would make the compiler
/// read a host file or variable (`confine`): named by line and construct,
/// quoting nothing of the source or of the file it names.
fn reads_the_host(hook: &DiscoveredHook, source: &[u8]) -> Option<Problem> {
    let Ok(source) = std::str::from_utf8(source) else {
        return Some(Problem::build(
            &hook.path,
            "is not UTF-8 text, which Rust source must be",
            "save the hook as UTF-8",
        ));
    };
    let (line, what) = confine::host_read(source)?;
    Some(Problem::build(
        &hook.path,
        format!(
            "line {line}: `{what}` would read a file of the host (or a variable of the build's environment) into the component while it is built; a single-file hook may not use it"
        ),
        "put the data in the hook's `config` in hookrt.toml, or make the hook a crate (its own folder with Cargo.toml) and build it where its build may read files",
    ))
}

/// A TypeScript, JavaScript or Python hook through its toolchain, in a
/// fresh folder keyed like its output (the build driver's cwd and temp dir).
fn build_script(
    hook: DiscoveredHook,
    hash: String,
    opts: &BuildOptions,
    components_dir: &Path,
    key: &[u8],
) -> Result<BuiltHook, Problem> {
    let work = opts.cache_dir.join("script-build").join(&hash);
    let _ = fs::remove_dir_all(&work);
    let out = components_dir.join(format!("{hash}.wasm"));
    let built = match hook.kind {
        SourceKind::Python => python::build(&hook, &opts.sdk_dir, &work),
        _ => typescript::build(&hook, &opts.sdk_dir, &work),
    };
    let result =
        built.and_then(|wasm| install(&wasm, &out, key).map_err(|e| install_problem(&hook, e)));
    let _ = fs::remove_dir_all(&work);
    result.map(|()| BuiltHook {
        hook,
        component: out,
        source_sha256: hash,
        compiled: true,
    })
}

/// A crate hook, built by cargo from its own folder.
#[allow(
    clippy::too_many_arguments,
    reason = "the build's context, passed down as it is"
)]
fn build_crate(
    hook: DiscoveredHook,
    hash: String,
    sdk: &str,
    opts: &BuildOptions,
    env: &BuildEnv,
    components_dir: &Path,
    key: &[u8],
    progress: &mut dyn FnMut(BuildEvent),
) -> Result<BuiltHook, Problem> {
    let dir = absolute(&hook.path);
    let mut cmd = env.cargo(&dir)?;
    // The crate's Cargo.lock is pinned with its files: cargo may not change it.
    cmd.arg("--locked")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"));
    let manifest = canonical(&hook.path.join("Cargo.toml"));
    let run = run_cargo(cmd, env.limit(), &mut |name| {
        progress(BuildEvent::CrateCompiled(name))
    });
    // The crate's build code (a `build.rs`) may have written into its
    // folder: key the output by the tree as it is now, so the next load
    // finds it without starting cargo.
    let hash = source_hash(&hook, sdk, opts.toolchain.as_deref()).unwrap_or(hash);
    let out = components_dir.join(format!("{hash}.wasm"));
    let Some(wasm) = run.artifacts.get(&manifest) else {
        if let Some(p) = crate_inputs::stale_cargo_lock(&hook, run.stderr_tail()) {
            return Err(p);
        }
        return Err(compile_problem(
            &hook.path,
            &run,
            run.errors.get(&manifest),
            None,
        ));
    };
    read_only_roots(&hook, wasm, &dir, &run, &env.roots())?;
    install(wasm, &out, key).map_err(|e| install_problem(&hook, e))?;
    Ok(BuiltHook {
        hook,
        component: out,
        source_sha256: hash,
        compiled: true,
    })
}

/// The dep-info check (`hooks/build/depinfo.rs`) of a hook cargo built into
/// `wasm` from the crate at `own`: every file read for it, and for the
/// run's registry crates, lies in `roots` or `own`, or it is refused.
fn read_only_roots(
    hook: &DiscoveredHook,
    wasm: &Path,
    own: &Path,
    run: &CargoRun,
    roots: &Roots,
) -> Result<(), Problem> {
    let registry = run
        .registry_depinfo
        .iter()
        .map(|(d, base)| depinfo::check(d, base, roots));
    std::iter::once(depinfo::check(
        &wasm.with_extension("d"),
        own,
        &roots.with(own),
    ))
    .chain(registry)
    .collect::<Result<(), _>>()
    .map_err(|e| {
        Problem::build(
            &hook.path,
            format!("is refused: {e}"),
            "a hook's build may read only its own crate, the SDK, the registry sources and the toolchain: put the data in the hook's `config` in hookrt.toml, or in its crate",
        )
    })
}

fn install_problem(hook: &DiscoveredHook, e: String) -> Problem {
    Problem::build(
        &hook.path,
        e,
        "check disk space and permissions of the cache dir",
    )
}

#[allow(
    clippy::too_many_arguments,
    reason = "the build's context, passed down as it is"
)]
fn build_single_files(
    singles: Vec<Stale>,
    opts: &BuildOptions,
    env: &BuildEnv,
    components_dir: &Path,
    key: &[u8],
    progress: &mut dyn FnMut(BuildEvent),
    built: &mut Vec<BuiltHook>,
    problems: &mut Vec<Problem>,
) {
    let ws = opts.cache_dir.join("build");
    let mut members = Vec::new();
    for Stale { hook, hash, source } in singles {
        let source = source.unwrap_or_default();
        match write_member(&ws, &hook, &source) {
            Ok(m) => members.push((hook, hash, m)),
            Err(e) => problems.push(Problem::build(
                &ws,
                format!("cannot write the generated crate for `{}`: {e}", hook.slug),
                "check permissions of the cache dir",
            )),
        }
    }
    if let Err(e) = write_workspace(&ws) {
        problems.push(Problem::build(
            &ws,
            format!("cannot write the generated workspace: {e}"),
            "check permissions of the cache dir",
        ));
        return;
    }
    let mut cmd = match env.cargo(&ws) {
        Ok(cmd) => cmd,
        Err(p) => {
            problems.push(p);
            return;
        }
    };
    cmd.arg("--manifest-path").arg(ws.join("Cargo.toml"));
    for (_, _, m) in &members {
        cmd.arg("-p").arg(&m.package);
    }
    let run = run_cargo(cmd, env.limit(), &mut |name| {
        progress(BuildEvent::CrateCompiled(name))
    });
    let roots = env.roots();
    for (hook, hash, m) in members {
        let manifest = canonical(&m.dir.join("Cargo.toml"));
        let out = components_dir.join(format!("{hash}.wasm"));
        let wasm = run.artifacts.get(&manifest);
        let wasm = match wasm.map(|w| (w, read_only_roots(&hook, w, &m.dir, &run, &roots))) {
            Some((_, Err(p))) => {
                problems.push(p);
                continue;
            }
            Some((w, Ok(()))) => Some(w),
            None => None,
        };
        match wasm {
            Some(wasm) => match install(wasm, &out, key) {
                Ok(()) => built.push(BuiltHook {
                    hook,
                    component: out,
                    source_sha256: hash,
                    compiled: true,
                }),
                Err(e) => problems.push(install_problem(&hook, e)),
            },
            None => {
                let generated = m.dir.join("src").join("lib.rs");
                problems.push(compile_problem(
                    &hook.path,
                    &run,
                    run.errors.get(&manifest),
                    Some(&generated),
                ));
            }
        }
    }
}

struct Member {
    package: String,
    dir: PathBuf,
}

/// Writes the generated crate of a single-file hook, its `src/lib.rs` the
/// `source` that was hashed and scanned. The package name derives from the
/// source path (stable across edits, so cargo rebuilds incrementally).
fn write_member(ws: &Path, hook: &DiscoveredHook, source: &[u8]) -> std::io::Result<Member> {
    let path_hash = &hex::encode(Sha256::digest(
        canonical(&hook.path).to_string_lossy().as_bytes(),
    ))[..8];
    let package = format!(
        "hook-{}-{path_hash}",
        hook.slug.file_stem().replace('_', "-")
    );
    let dir = ws.join("hooks").join(&package);
    fs::create_dir_all(dir.join("src"))?;
    let manifest = format!(
        "# Generated by hookrt from {src}; edits are overwritten.\n[package]\nname = \"{package}\"\nversion = \"0.0.0\"\n\
         edition = \"2024\"\npublish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\nhookrt-sdk = \"{SDK_REQ}\"\n",
        src = hook.path.display(),
    );
    write_if_changed(&dir.join("Cargo.toml"), manifest.as_bytes())?;
    write_if_changed(&dir.join("src").join("lib.rs"), source)?;
    Ok(Member { package, dir })
}

/// Writes the generated workspace, first removing the generated crates of
/// an older hookrt: a member that still requires another `hookrt-sdk` would
/// fail the resolution of every member (`members = ["hooks/*"]`). A removed
/// member is written again when its hook is next built.
fn write_workspace(ws: &Path) -> std::io::Result<()> {
    let wanted = format!("hookrt-sdk = \"{SDK_REQ}\"\n");
    if let Ok(entries) = fs::read_dir(ws.join("hooks")) {
        for entry in entries.flatten() {
            let manifest = fs::read_to_string(entry.path().join("Cargo.toml")).unwrap_or_default();
            if manifest.starts_with("# Generated by hookrt") && !manifest.contains(&wanted) {
                fs::remove_dir_all(entry.path())?;
            }
        }
    }
    let manifest = "# Generated by hookrt: one member per single-file hook.\n[workspace]\nresolver = \"3\"\nmembers = [\"hooks/*\"]\n\n\
                    [profile.release]\nopt-level = \"s\"\ndebug = false\nstrip = true\n";
    write_if_changed(&ws.join("Cargo.toml"), manifest.as_bytes())?;
    let toolchain =
        format!("[toolchain]\nchannel = \"{HOOK_TOOLCHAIN}\"\ntargets = [\"{HOOK_TARGET}\"]\n");
    write_if_changed(&ws.join("rust-toolchain.toml"), toolchain.as_bytes())
}

/// Leaves an unchanged file alone so cargo's fingerprints stay fresh.
fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    fs::write(path, bytes)
}

/// Copies a built component under its content key (owner-only, atomic) and
/// records its digest beside it (`<component>.sha256`), taken from the bytes
/// written: every later load re-hashes the component against it.
fn install(from: &Path, to: &Path, key: &[u8]) -> Result<(), String> {
    let bytes = fs::read(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    let write = |path: &Path, bytes: &[u8]| {
        dir::write_private(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let digest = hex::encode(Sha256::digest(&bytes));
    write(&record_of(to), digest_record(key, &digest, None).as_bytes())?;
    write(to, &bytes)
}

/// The digest record beside a cached component: `<hash>.wasm.sha256`.
fn record_of(component: &Path) -> PathBuf {
    component.with_extension("wasm.sha256")
}

/// A digest record's text: the digest, its MAC under the cache's key (so
/// only this cache's hookrt can have written it), and the stamp when there
/// is one.
fn digest_record(key: &[u8], digest: &str, stamp: Option<&[u8]>) -> String {
    let mac = hex::encode(dir::hmac_sha256(
        key,
        &[DIGEST_RECORD_TAG, digest.as_bytes()],
    ));
    match stamp {
        Some(s) => format!("{digest}\n{mac}\n{}\n", hex::encode(s)),
        None => format!("{digest}\n{mac}\n"),
    }
}

/// What the record's MAC is over besides the digest.
const DIGEST_RECORD_TAG: &[u8] = b"hookrt component digest v1\0";

/// The digest a record holds, when its MAC is this cache's (`None` for a
/// record an older hookrt wrote, or one planted: its component is then
/// built again, never trusted), and its stamp line.
fn authentic_digest<'r>(key: &[u8], record: &'r str) -> Option<(&'r str, Option<&'r str>)> {
    let mut lines = record.lines().map(str::trim);
    let digest = lines
        .next()
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))?;
    let mac = lines.next()?;
    let want = hex::encode(dir::hmac_sha256(
        key,
        &[DIGEST_RECORD_TAG, digest.as_bytes()],
    ));
    subtle_eq(mac.as_bytes(), want.as_bytes()).then_some((digest, lines.next()))
}

/// Constant-time equality of two byte strings.
fn subtle_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `component` is in the cache with an authenticated digest record:
/// else it is built again (a component whose record was planted, damaged or
/// written before records were authenticated is never taken as it is).
fn cached(component: &Path, key: &[u8]) -> bool {
    component.is_file()
        && fs::read_to_string(record_of(component))
            .ok()
            .is_some_and(|r| authentic_digest(key, &r).is_some())
}

/// `prebuilt` mode: components are taken as they are; a source hook would
/// need cargo, which this mode never starts.
fn prebuilt(hooks: &[DiscoveredHook], cache_dir: &Path) -> (Vec<BuiltHook>, Vec<Problem>) {
    let mut built = Vec::new();
    let mut problems = Vec::new();
    for hook in hooks {
        if let Some(pack) = packs::pack_of(hook) {
            // A pack is a component shipped inside hookrt: nothing to compile.
            match pack::component_file(pack, cache_dir) {
                Ok(file) => built.push(BuiltHook {
                    hook: hook.clone(),
                    component: file,
                    source_sha256: pack.sha256().to_owned(),
                    compiled: false,
                }),
                Err(e) => problems.push(pack_problem(hook, &e)),
            }
            continue;
        }
        if hook.kind != SourceKind::Component {
            problems.push(Problem::build(&hook.path,
                "is a source hook, and this agent folder is loaded in `prebuilt` mode: nothing is compiled",
                "build the folder where building is trusted (`hookrt build DIR --out OUT`) and ship OUT, which holds the .wasm components",
            ));
            continue;
        }
        match plain::read_regular(&hook.path) {
            Ok(bytes) => built.push(BuiltHook {
                hook: hook.clone(),
                component: hook.path.clone(),
                source_sha256: hex::encode(Sha256::digest(bytes)),
                compiled: false,
            }),
            Err(e) => problems.push(Problem::build(
                &hook.path,
                format!("cannot read component: {e}"),
                "check permissions",
            )),
        }
    }
    (built, problems)
}

/// A pack's component could not be written into the cache dir.
fn pack_problem(hook: &DiscoveredHook, e: &std::io::Error) -> Problem {
    Problem::build(
        &hook.path,
        format!(
            "the pack `{}` cannot be written into the cache dir: {e}",
            hook.slug
        ),
        "check that the cache dir (HOOKRT_CACHE_DIR, --cache-dir) is a private folder you can write",
    )
}

/// The sha256 of a built hook's component. A component cargo or the JS
/// toolchain built has its digest recorded beside it when it was installed
/// (`<component>.sha256`), with a MAC under the cache's `key`, so only this
/// cache's hookrt can have written it; the component's bytes are hashed and
/// must match it, or the cache was changed behind hookrt's back and the
/// component is refused. A record without a valid MAC (planted, damaged, or
/// older than authenticated records) is not taken: the build plan builds such
/// a component again (`cached`), so one seen here was changed meanwhile, and
/// is refused too. Once checked, the record also holds a stamp of the
/// component file (`hooks/cache/stamp.rs`, under the same key): while the
/// file still matches it, the digest is taken without reading the component.
pub(crate) fn component_digest(built: &BuiltHook, key: &[u8]) -> Result<String, Problem> {
    // A `.wasm` hook's source digest was taken from its bytes in this very
    // load; a pack's is the digest of the bytes hookrt ships.
    if matches!(built.hook.kind, SourceKind::Component | SourceKind::Pack) {
        return Ok(built.source_sha256.clone());
    }
    let unreadable = |e: std::io::Error| {
        Problem::load(
            &built.component,
            format!("cannot read component: {e}"),
            "run `hookrt build` again",
        )
    };
    let changed = |what: String| {
        Problem::load(
            &built.component,
            format!(
                "cached component of `{}` {what}: the cache was changed",
                built.hook.slug
            ),
            format!(
                "delete {} and its .sha256 (hookrt rebuilds it), and check who can write to the cache dir",
                built.component.display()
            ),
        )
    };
    let mut file = plain::open_regular(&built.component, true).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    let sidecar = record_of(&built.component);
    let recorded = fs::read_to_string(&sidecar).unwrap_or_default();
    let Some((recorded_digest, stamp_line)) = authentic_digest(key, &recorded) else {
        return Err(changed("has no digest record this cache wrote".to_owned()));
    };
    let stamped = stamp_line
        .and_then(|s| hex::decode(s).ok())
        .is_some_and(|s| stamp::matches(key, recorded_digest.as_bytes(), &meta, &s));
    if stamped {
        return Ok(recorded_digest.to_owned());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(unreadable)?;
    let digest = hex::encode(Sha256::digest(&bytes));
    if recorded_digest != digest {
        return Err(changed(format!(
            "does not match the digest recorded when it was built (recorded {recorded_digest}, found {digest})"
        )));
    }
    // Best effort: without the stamp the next load hashes again.
    let stamp = stamp::stamp(key, digest.as_bytes(), &meta);
    let record = digest_record(key, &digest, stamp.as_ref().map(|s| &s[..]));
    if recorded != record {
        let _ = dir::write_private(&sidecar, record.as_bytes());
    }
    Ok(digest)
}
