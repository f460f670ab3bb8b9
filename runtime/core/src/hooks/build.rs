//! Build: turning hook sources into components with the guest SDK.
//!
//! Single-file hooks become members of one generated cargo workspace under the
//! cache dir; crate hooks are built in place. Everything shares one target dir,
//! so dependencies (the SDK, serde) compile once and rebuilds are incremental.
//! Outputs are keyed by a hash of the source, the SDK and the toolchain: an
//! unchanged hook never starts cargo.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::hooks::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::problem::{Problem, ProblemKind};

/// The Rust toolchain hooks are built with (rust-toolchain.toml pins the same).
pub const HOOK_TOOLCHAIN: &str = "1.95.0";
/// The compilation target of every hook.
pub const HOOK_TARGET: &str = "wasm32-wasip2";
/// The version requirement hooks use for `hookrt-sdk`.
pub const SDK_REQ: &str = "0.2";
/// The SDK this runtime was built next to; `HOOKRT_SDK_DIR` overrides it.
pub const DEFAULT_SDK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guest-sdk");

/// Where and how hooks are built.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Cache root: generated workspace, shared target dir, components, artifacts.
    pub cache_dir: PathBuf,
    /// The `hookrt-sdk` crate single-file hooks depend on.
    pub sdk_dir: PathBuf,
    /// `RUSTUP_TOOLCHAIN` for cargo (`None`: whatever `cargo` resolves to).
    pub toolchain: Option<String>,
}

impl BuildOptions {
    /// Defaults for an agent folder: cache in `<agent>/.hookrt`.
    pub fn for_agent(agent_dir: &Path) -> BuildOptions {
        BuildOptions {
            cache_dir: agent_dir.join(".hookrt"),
            sdk_dir: std::env::var_os("HOOKRT_SDK_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_SDK_DIR)),
            toolchain: Some(
                std::env::var("HOOKRT_TOOLCHAIN").unwrap_or_else(|_| HOOK_TOOLCHAIN.to_owned()),
            ),
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
    let mut built = Vec::new();
    let mut problems = Vec::new();
    // cargo runs in other folders: every path handed to it must be absolute.
    let opts = &BuildOptions {
        cache_dir: absolute(&opts.cache_dir),
        sdk_dir: absolute(&opts.sdk_dir),
        toolchain: opts.toolchain.clone(),
    };
    let sdk = match sdk_fingerprint(&opts.sdk_dir) {
        Ok(fp) => fp,
        Err(p) if hooks.iter().any(|h| h.kind != SourceKind::Component) => {
            return (Vec::new(), vec![p]);
        }
        Err(_) => String::new(),
    };
    let components_dir = opts.cache_dir.join("components");
    let mut stale: Vec<(DiscoveredHook, String)> = Vec::new();
    for hook in hooks {
        let hash = match source_hash(hook, &sdk, opts.toolchain.as_deref()) {
            Ok(h) => h,
            Err(e) => {
                problems.push(Problem::new(ProblemKind::Build, 
                    &hook.path,
                    format!("cannot read source: {e}"),
                    "check permissions",
                ));
                continue;
            }
        };
        let out = if hook.kind == SourceKind::Component {
            hook.path.clone()
        } else {
            components_dir.join(format!("{hash}.wasm"))
        };
        if out.is_file() {
            built.push(BuiltHook {
                hook: hook.clone(),
                component: out,
                source_sha256: hash,
                compiled: false,
            });
        } else {
            stale.push((hook.clone(), hash));
        }
    }
    progress(BuildEvent::Planned {
        stale: stale.len(),
        cached: built.len(),
    });
    if stale.is_empty() {
        return (built, problems);
    }
    if let Err(e) = fs::create_dir_all(&components_dir) {
        problems.push(Problem::new(ProblemKind::Build, 
            &components_dir,
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
        .partition(|(_, hash)| components_dir.join(format!("{hash}.wasm")).is_file());
    for (hook, hash) in done {
        let component = components_dir.join(format!("{hash}.wasm"));
        built.push(BuiltHook {
            hook,
            component,
            source_sha256: hash,
            compiled: false,
        });
    }
    let (singles, crates): (Vec<_>, Vec<_>) = stale
        .into_iter()
        .partition(|(h, _)| h.kind == SourceKind::SingleFile);
    if !singles.is_empty() {
        build_single_files(
            &singles,
            opts,
            &components_dir,
            progress,
            &mut built,
            &mut problems,
        );
    }
    for (hook, hash) in crates {
        let out = components_dir.join(format!("{hash}.wasm"));
        let dir = absolute(&hook.path);
        let mut cmd = cargo(opts);
        cmd.current_dir(&dir)
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"));
        let manifest = canonical(&hook.path.join("Cargo.toml"));
        let run = run_cargo(cmd, progress);
        // cargo may have written the crate's Cargo.lock: key the output by the
        // tree as it is now, so the next load finds it without starting cargo.
        let (hash, out) = match source_hash(&hook, &sdk, opts.toolchain.as_deref()) {
            Ok(h) => {
                let out = components_dir.join(format!("{h}.wasm"));
                (h, out)
            }
            Err(_) => (hash, out),
        };
        match run.artifacts.get(&manifest) {
            Some(wasm) => match install(wasm, &out) {
                Ok(()) => built.push(BuiltHook {
                    hook,
                    component: out,
                    source_sha256: hash,
                    compiled: true,
                }),
                Err(e) => problems.push(Problem::new(ProblemKind::Build, 
                    &hook.path,
                    e,
                    "check disk space and permissions of the cache dir",
                )),
            },
            None => problems.push(compile_problem(
                &hook.path,
                &run,
                run.errors.get(&manifest),
                None,
            )),
        }
    }
    (built, problems)
}

fn build_single_files(
    singles: &[(DiscoveredHook, String)],
    opts: &BuildOptions,
    components_dir: &Path,
    progress: &mut dyn FnMut(BuildEvent),
    built: &mut Vec<BuiltHook>,
    problems: &mut Vec<Problem>,
) {
    let ws = opts.cache_dir.join("build");
    let mut members = Vec::new();
    for (hook, hash) in singles {
        match write_member(&ws, hook) {
            Ok(m) => members.push((hook.clone(), hash.clone(), m)),
            Err(e) => problems.push(Problem::new(ProblemKind::Build, 
                &ws,
                format!("cannot write the generated crate for `{}`: {e}", hook.slug),
                "check permissions of the cache dir",
            )),
        }
    }
    if let Err(e) = write_workspace(&ws) {
        problems.push(Problem::new(ProblemKind::Build, 
            &ws,
            format!("cannot write the generated workspace: {e}"),
            "check permissions of the cache dir",
        ));
        return;
    }
    let mut cmd = cargo(opts);
    cmd.current_dir(&ws)
        .arg("--manifest-path")
        .arg(ws.join("Cargo.toml"));
    for (_, _, m) in &members {
        cmd.arg("-p").arg(&m.package);
    }
    let run = run_cargo(cmd, progress);
    for (hook, hash, m) in members {
        let manifest = canonical(&m.dir.join("Cargo.toml"));
        let out = components_dir.join(format!("{hash}.wasm"));
        match run.artifacts.get(&manifest) {
            Some(wasm) => match install(wasm, &out) {
                Ok(()) => built.push(BuiltHook {
                    hook,
                    component: out,
                    source_sha256: hash,
                    compiled: true,
                }),
                Err(e) => problems.push(Problem::new(ProblemKind::Build, 
                    &hook.path,
                    e,
                    "check disk space and permissions of the cache dir",
                )),
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

/// Writes the generated crate of a single-file hook. The package name derives
/// from the source path (stable across edits, so cargo rebuilds incrementally).
fn write_member(ws: &Path, hook: &DiscoveredHook) -> std::io::Result<Member> {
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
    write_if_changed(&dir.join("src").join("lib.rs"), &fs::read(&hook.path)?)?;
    Ok(Member { package, dir })
}

fn write_workspace(ws: &Path) -> std::io::Result<()> {
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

fn cargo(opts: &BuildOptions) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO_BIN").unwrap_or_else(|| "cargo".into()));
    // Variables of an outer cargo (when hookrt runs under `cargo run`/`cargo test`)
    // would point the hook build at the wrong target dir, flags or rustc.
    // Network, registry, terminal and home settings are the user's and pass through.
    const KEEP: [&str; 6] = [
        "CARGO_HOME",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTRIES_",
        "CARGO_REGISTRY_",
        "CARGO_TERM_",
    ];
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        let outer_cargo = k.starts_with("CARGO_") && !KEEP.iter().any(|p| k.starts_with(p));
        let compiler = k.starts_with("RUSTC") || k.starts_with("RUSTDOC") || k == "RUSTFLAGS";
        if outer_cargo || compiler {
            cmd.env_remove(&key);
        }
    }
    if let Some(t) = &opts.toolchain {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    }
    cmd.args([
        "build",
        "--release",
        "--target",
        HOOK_TARGET,
        "--message-format=json",
        "--keep-going",
        "--target-dir",
    ])
    .arg(opts.cache_dir.join("target"));
    // Hooks depend on `hookrt-sdk = "0.2"`; this runtime supplies the SDK it
    // was built with, so crate hooks build wherever their folder lives.
    let sdk = toml::Value::String(opts.sdk_dir.to_string_lossy().into_owned());
    cmd.arg("--config")
        .arg(format!("patch.crates-io.hookrt-sdk.path={sdk}"));
    cmd
}

#[derive(Default)]
struct CargoRun {
    /// manifest path -> built .wasm
    artifacts: HashMap<PathBuf, PathBuf>,
    /// manifest path -> rendered compiler errors
    errors: HashMap<PathBuf, String>,
    /// last lines cargo wrote to stderr (resolution errors, missing target...)
    stderr_tail: String,
    spawn_error: Option<String>,
}

fn run_cargo(mut cmd: Command, progress: &mut dyn FnMut(BuildEvent)) -> CargoRun {
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
                    progress(BuildEvent::CrateCompiled(name));
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

fn compile_problem(
    path: &Path,
    run: &CargoRun,
    errors: Option<&String>,
    generated: Option<&Path>,
) -> Problem {
    if let Some(e) = &run.spawn_error {
        return Problem::new(ProblemKind::Build, 
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
    Problem::new(ProblemKind::Build, 
        path,
        format!("does not build into a component:\n{}", detail.trim_end()),
        fix,
    )
}

/// Copies a built component under its content key (temp file + rename).
fn install(from: &Path, to: &Path) -> Result<(), String> {
    let tmp = unique_tmp(to);
    fs::copy(from, &tmp)
        .map_err(|e| format!("cannot copy {} to the cache: {e}", from.display()))?;
    fs::rename(&tmp, to).map_err(|e| format!("cannot write {}: {e}", to.display()))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Hash of everything a hook's component depends on besides cargo's registry.
fn source_hash(
    hook: &DiscoveredHook,
    sdk: &str,
    toolchain: Option<&str>,
) -> std::io::Result<String> {
    let mut h = Sha256::new();
    match hook.kind {
        SourceKind::Component => return Ok(hex::encode(Sha256::digest(fs::read(&hook.path)?))),
        SourceKind::SingleFile => {
            h.update(b"hookrt single-file v1\0");
            h.update(fs::read(&hook.path)?);
        }
        SourceKind::Crate => {
            h.update(b"hookrt crate v1\0");
            hash_tree(&mut h, &hook.path)?;
        }
    }
    h.update(sdk.as_bytes());
    h.update(toolchain.unwrap_or("").as_bytes());
    Ok(hex::encode(h.finalize()))
}

/// Hashes relative paths and contents of a tree, skipping `target/` and hidden entries.
fn hash_tree(h: &mut Sha256, root: &Path) -> std::io::Result<()> {
    let walk = WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || (e.depth() == 1 && name == "target"))
        });
    for entry in walk {
        let entry = entry.map_err(std::io::Error::other)?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            let bytes = fs::read(entry.path())?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
    }
    Ok(())
}

/// Digest of the SDK crate and the WIT it is generated from.
fn sdk_fingerprint(sdk_dir: &Path) -> Result<String, Problem> {
    let missing = || {
        Problem::new(ProblemKind::Build, 
            sdk_dir,
            "the hookrt-sdk crate is not there",
            "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
        )
    };
    if !sdk_dir.join("Cargo.toml").is_file() {
        return Err(missing());
    }
    let mut h = Sha256::new();
    for dir in [sdk_dir.join("src"), sdk_dir.join("wit")] {
        hash_tree(&mut h, &dir).map_err(|_| missing())?;
    }
    h.update(fs::read(sdk_dir.join("Cargo.toml")).map_err(|_| missing())?);
    Ok(hex::encode(h.finalize()))
}

/// An exclusive lock on the cache's build folder, so concurrent hookrt
/// processes (or test threads) never write the same generated crate at once.
struct BuildLock(#[allow(dead_code, reason = "held for its lock")] fs::File);

impl BuildLock {
    fn acquire(cache_dir: &Path) -> Result<BuildLock, Problem> {
        let path = cache_dir.join("build.lock");
        let fail = |e: std::io::Error| {
            Problem::new(ProblemKind::Build, 
                &path,
                format!("cannot lock the build cache: {e}"),
                "check permissions of the cache dir",
            )
        };
        fs::create_dir_all(cache_dir).map_err(fail)?;
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(fail)?;
        file.lock().map_err(fail)?;
        Ok(BuildLock(file))
    }
}

/// A temp-file name no other writer (process or thread) uses at the same time.
pub fn unique_tmp(path: &Path) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    path.with_extension(format!("tmp{}-{n}", std::process::id()))
}

/// The sha256 of a built hook's component. A component hook's source digest
/// is already that. A component cargo built lives in the cache under its
/// source digest and never changes, so its digest is computed once and kept
/// beside it (`<component>.sha256`): loading 100 cached hooks then reads no
/// component bytes at all.
pub fn component_digest(built: &BuiltHook) -> std::io::Result<String> {
    if built.hook.kind == SourceKind::Component {
        return Ok(built.source_sha256.clone());
    }
    let sidecar = built.component.with_extension("wasm.sha256");
    if let Ok(text) = std::fs::read_to_string(&sidecar) {
        let text = text.trim();
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(text.to_owned());
        }
    }
    let digest = hex::encode(Sha256::digest(std::fs::read(&built.component)?));
    // Best effort: without the sidecar the next load hashes the bytes again.
    let tmp = unique_tmp(&sidecar);
    if std::fs::write(&tmp, &digest).is_ok() && std::fs::rename(&tmp, &sidecar).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(digest)
}
