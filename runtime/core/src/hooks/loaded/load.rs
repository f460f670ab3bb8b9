//! Loading: a built component made ready in the sandbox (compiled or taken
//! from the artifact cache, linked, its imports checked against its grants,
//! its world version found, its subscriptions asked for and checked).
//! A [`LoadedHook`] also holds, under the `reuse` policy, its warm instance.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use wasmtime::Store;

use crate::WORLD;
use crate::event::kind;
use crate::event::scope::Scope;
use crate::hooks::build::component::{self, BuiltHook};
use crate::hooks::build::python;
use crate::hooks::cache::start::{self, StartKey};
use crate::hooks::cache::{artifact, dir};
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::folder::settings::HookSettings;
use crate::hooks::folder::slug::Slug;
use crate::hooks::loaded::granted::{self, HeldGrants};
use crate::hooks::problem::Problem;
use crate::hooks::project::{Project, ProjectError};
use crate::sandbox::engine::{self, Prepared, Sandbox};
use crate::sandbox::failure;
use crate::sandbox::grants;
use crate::sandbox::host::StoreData;
use crate::sandbox::http::HttpPolicy;
use crate::sandbox::limits::Limits;
use crate::sandbox::metrics::Metrics;
use crate::sandbox::redaction::Redactor;
use crate::sandbox::state::StateStore;
use crate::sandbox::wit::{self, v0_1_0, v0_2_0, v0_3_0, v0_4_0};

/// The least wall clock a hook's start at load (instantiate, `configure`,
/// `subscriptions`) gets, whatever its `deadline_ms`: the first instantiation
/// also builds the component's memory image. Deliveries keep `deadline_ms`.
pub(crate) const START_DEADLINE_MS: u64 = 5_000;

/// A hook ready to receive deliveries.
pub struct LoadedHook {
    /// The hook's slug.
    pub slug: Slug,
    /// Where it came from.
    pub kind: SourceKind,
    /// Its source file or folder.
    pub source: PathBuf,
    /// Digest of the source (and SDK/toolchain) the component was built from.
    pub source_sha256: String,
    /// Digest of the component.
    pub component_sha256: String,
    /// The component file (in the cache, or the source itself for a `.wasm` hook).
    pub component: PathBuf,
    /// True when cargo built its component during this load.
    pub cargo_built: bool,
    /// True when Cranelift compiled it during this load (no cached artifact).
    pub compiled: bool,
    /// What `hookrt.toml` sets for it.
    pub settings: HookSettings,
    /// The digest of its own files, and everything `hookrt.toml` makes it
    /// run with (JSON): what `hookrt.lock` pins of it before it is built
    /// (set by the load of the whole folder).
    pub reviewed: (String, String),
    /// Its subscriptions, as the hook reported them.
    pub subscriptions: Vec<String>,
    /// The interfaces the component imports.
    pub imports: Vec<String>,
    /// Each import, what it needs and whether it is granted.
    pub import_audit: Vec<grants::ImportAudit>,
    /// The world version it was built against.
    pub world_version: &'static str,
    /// Whose events it receives.
    pub scope: Scope,
    /// What each grant it holds keeps, resolved for this host (`exec`'s
    /// programs and digests, `secret`'s values, ...), in the registry's order.
    pub(crate) held: HeldGrants,
    pub(crate) pre: Prepared,
    pub(crate) config_json: String,
    pub(crate) warm: Mutex<Option<Warm>>,
    /// Start of the current minute, and the log bytes and lines kept in it.
    pub(crate) log_window: Mutex<(Instant, u64, u64)>,
    /// What its deliveries take, in µs (a moving average; 0 before the
    /// first): lanes give workers the most work left by it, and decision
    /// workers start the costliest hooks first.
    pub(crate) cost_us: std::sync::atomic::AtomicU64,
}

/// A live instance's exports, by world version.
pub(crate) enum Bindings {
    V4(v0_4_0::DefineHook),
    V3(v0_3_0::DefineHook),
    V2(v0_2_0::DefineHook),
    V1(v0_1_0::DefineHook),
}

/// A warm instance kept between deliveries under the `reuse` policy.
pub(crate) struct Warm {
    pub(crate) store: Store<StoreData>,
    pub(crate) bindings: Bindings,
    /// Deliveries it has served.
    pub(crate) uses: u64,
}

/// Why an instance could not be made ready.
pub(crate) enum Failed {
    /// Instantiation or `configure` trapped or hit a limit.
    Wasm(wasmtime::Error),
    /// `configure` returned an error: the hook refused its configuration.
    Refused(String),
}

/// The profile `hook`'s imports are checked under: a Python hook's, built
/// here or prebuilt by `hookrt build --out` (a component is its own path),
/// or the standard one.
pub(crate) fn profile_of(hook: &DiscoveredHook) -> grants::Profile {
    match hook.kind {
        SourceKind::Python => grants::Profile::Python,
        SourceKind::Component if python::is_marked(&hook.path) => grants::Profile::Python,
        _ => grants::Profile::Standard,
    }
}

impl LoadedHook {
    /// Loads a built hook: compile or fetch from the artifact cache, link,
    /// check the world, and ask for (and check) its subscriptions.
    /// `scratch` holds what hooks store while loading (configure, subscriptions):
    /// one throw-away store per load, never the runtime's. `project` is the
    /// project folder, for the grants that act on it.
    pub fn load(
        sandbox: &Sandbox,
        built: &BuiltHook,
        settings: HookSettings,
        cache_dir: &std::path::Path,
        scratch: &Arc<StateStore>,
        project: &Result<Project, ProjectError>,
    ) -> Result<LoadedHook, Problem> {
        let path = &built.hook.path;
        check_size(built)?;
        let cache_problem = |e| cache_problem(path, e);
        let key = cache_key(path, cache_dir)?;
        let component_sha256 = component::component_digest(built, &key)?;
        let metering = settings.limits.metering;
        let engine = sandbox.engine_for(metering);
        let engine_id = sandbox.engine_id(metering);
        let loaded = artifact::load(
            engine,
            &engine_id,
            cache_dir,
            &key,
            &component_sha256,
            &built.component,
        )
        .map_err(cache_problem)?;
        let (imports, import_audit) = checked_imports(engine, &loaded.component, built, &settings)?;
        let pre = sandbox.prepare(&loaded.component, metering).map_err(|e| {
            Problem::load(path,
                format!("does not implement the `{WORLD}` world (any of versions {}): {}", wit::SUPPORTED_VERSIONS.join(", "), one_line(&e)),
                "build it with hookrt-sdk's define_hook! macro, or export `configure`, `subscriptions` and `handle` as in wit/",
            )
        })?;
        let config_json = serde_json::Value::Object(settings.config.clone()).to_string();
        let mut hook = LoadedHook {
            // The grants resolved for this host, before `settings` moves in.
            held: granted::held(&built.hook, &settings, project)?,
            slug: built.hook.slug.clone(),
            kind: built.hook.kind,
            source: path.clone(),
            source_sha256: built.source_sha256.clone(),
            component_sha256,
            component: built.component.clone(),
            cargo_built: built.compiled,
            compiled: loaded.compiled,
            settings,
            reviewed: Default::default(),
            subscriptions: Vec::new(),
            imports,
            import_audit,
            world_version: pre.version(),
            scope: built.hook.scope.clone(),
            pre,
            config_json,
            warm: Mutex::new(None),
            log_window: Mutex::new((Instant::now(), 0, 0)),
            cost_us: std::sync::atomic::AtomicU64::new(0),
        };
        // A start that succeeded before with all the same inputs is not run again.
        let start = hook.start_key(&engine_id);
        // (Checked again: a record is only as current as the hookrt that wrote it.)
        if let Some(subscriptions) =
            start::recall(cache_dir, &key, &start).and_then(|s| check_subscriptions(s).ok())
        {
            // What the start would have built: the memory images (a mapped
            // artifact's come from its file), so a first delivery never
            // spends its deadline building them.
            if let Err(e) = loaded.component.initialize_copy_on_write_image() {
                return Err(Problem::load(
                    path,
                    format!("cannot prepare its memory image: {}", one_line(&e)),
                    "check memory limits (ulimit -v) and the cache dir; `hookrt check` shows the whole error",
                ));
            }
            hook.subscriptions = subscriptions;
            return Ok(hook);
        }
        hook.subscriptions = hook.ask_subscriptions(sandbox, scratch)?;
        start::remember(cache_dir, &key, &start, &hook.subscriptions);
        Ok(hook)
    }

    /// A new instance in `store`, configured (0.2.0 and later hooks get their `config`).
    pub(crate) fn instantiate(&self, store: &mut Store<StoreData>) -> Result<Bindings, Failed> {
        match &self.pre {
            Prepared::V1(pre) => pre
                .instantiate(&mut *store)
                .map(Bindings::V1)
                .map_err(Failed::Wasm),
            Prepared::V2(pre) => {
                let b = pre.instantiate(&mut *store).map_err(Failed::Wasm)?;
                match b.call_configure(&mut *store, &self.config_json) {
                    Ok(Ok(())) => Ok(Bindings::V2(b)),
                    Ok(Err(msg)) => Err(Failed::Refused(msg)),
                    Err(e) => Err(Failed::Wasm(e)),
                }
            }
            Prepared::V3(pre) => {
                let b = pre.instantiate(&mut *store).map_err(Failed::Wasm)?;
                match b.call_configure(&mut *store, &self.config_json) {
                    Ok(Ok(())) => Ok(Bindings::V3(b)),
                    Ok(Err(msg)) => Err(Failed::Refused(msg)),
                    Err(e) => Err(Failed::Wasm(e)),
                }
            }
            Prepared::V4(pre) => {
                let b = pre.instantiate(&mut *store).map_err(Failed::Wasm)?;
                match b.call_configure(&mut *store, &self.config_json) {
                    Ok(Ok(())) => Ok(Bindings::V4(b)),
                    Ok(Err(msg)) => Err(Failed::Refused(msg)),
                    Err(e) => Err(Failed::Wasm(e)),
                }
            }
        }
    }

    /// Its subscriptions, checked.
    fn ask_subscriptions(
        &self,
        sandbox: &Sandbox,
        scratch: &Arc<StateStore>,
    ) -> Result<Vec<String>, Problem> {
        let path = &self.source;
        let failed = |message: String| subscriptions_problem(path, message, &[]);
        let limits = &self.settings.limits;
        // Loading runs on a throw-away state: nothing a hook stores here persists.
        let mut store = sandbox.new_store(
            limits,
            scratch.access(&self.id()),
            Metrics::new().access(&self.id(), &Redactor::default()),
            HttpPolicy::default(),
        );
        // The first instantiation of a component also builds its memory image
        // (a TypeScript hook's holds its engine's snapshot), which on a busy
        // machine can outlast a 200 ms deadline: starting at load gets at
        // least START_DEADLINE_MS of wall clock. Fuel still bounds it as set.
        let start = Limits {
            deadline_ms: limits.deadline_ms.max(START_DEADLINE_MS),
            ..limits.clone()
        };
        engine::begin_delivery(&mut store, &start);
        let subs = match self.instantiate(&mut store) {
            Ok(Bindings::V4(b)) => b.call_subscriptions(&mut store),
            Ok(Bindings::V3(b)) => b.call_subscriptions(&mut store),
            Ok(Bindings::V2(b)) => b.call_subscriptions(&mut store),
            Ok(Bindings::V1(b)) => b.call_subscriptions(&mut store),
            Err(Failed::Refused(msg)) => {
                return Err(failed(format!("refused its configuration: {msg}")));
            }
            Err(Failed::Wasm(e)) => {
                if let Some((setting, reached)) = failure::count_limit(&e) {
                    return Err(self.count_problem(setting, reached));
                }
                return Err(failed(format!(
                    "failed while starting (instantiation or `configure`, {}): {}",
                    failure::classify(&e, store.data()),
                    failure::describe(&e)
                )));
            }
        }
        .map_err(|e| {
            failed(format!(
                "failed while reporting its subscriptions ({}): {}",
                failure::classify(&e, store.data()),
                failure::describe(&e)
            ))
        })?;
        check_subscriptions(subs).map_err(|(m, bad)| subscriptions_problem(path, m, &bad))
    }

    /// A component with more core instances, memories or tables than its
    /// limits allow (met at instantiation under on-demand allocation): the
    /// count it reached, the setting and the value that lets it start.
    fn count_problem(&self, setting: &'static str, reached: u64) -> Problem {
        let limits = &self.settings.limits;
        let limit = match setting {
            "instances" => limits.instances,
            "memories" => limits.memories,
            _ => limits.tables,
        };
        let what = match setting {
            "instances" => "core instances",
            other => other,
        };
        let table = self.scope.config_table(self.slug.as_str());
        Problem::load(
            &self.source,
            format!(
                "has more {what} than its limit allows: instantiating it reached {reached}, and `{setting}` is {limit}"
            ),
            format!(
                "raise `{setting}` in [{table}] of hookrt.toml above what the component needs (a Python hook needs 14 core instances; the default for one is {})",
                crate::sandbox::limits::PYTHON_INSTANCES
            ),
        )
    }

    /// The outbound HTTP policy of its stores (nothing allowed without the grant).
    pub(crate) fn http_policy(&self, redactor: &Redactor) -> HttpPolicy {
        if !self.settings.grants.contains("http") {
            return HttpPolicy::default();
        }
        HttpPolicy::new(&self.settings.http_allow, redactor.clone())
    }

    /// What its deliveries take, in µs: a moving average over about the
    /// last eight, 0 before the first.
    pub(crate) fn cost_us(&self) -> u64 {
        self.cost_us.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a delivery that took `us` into [`LoadedHook::cost_us`].
    pub(crate) fn note_cost(&self, us: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let old = self.cost_us.load(Relaxed);
        let new = if old == 0 { us } else { (old * 7 + us) / 8 };
        self.cost_us.store(new.max(1), Relaxed);
    }

    /// Whether a grant it holds acts on the project folder (`exec`, `read`,
    /// `write`):
    /// then an event naming another folder is refused ([`Project::admits`]).
    pub(crate) fn uses_project(&self) -> bool {
        self.held.iter().any(|(grant, _)| grant.needs_project)
    }

    /// The hook's id across scopes (`audit`, `subagents/researcher/audit`).
    pub fn id(&self) -> String {
        self.scope.hook_id(self.slug.as_str())
    }

    /// Whether `id` is this hook's id, without building it (a hot-path lookup).
    pub(crate) fn has_id(&self, id: &str) -> bool {
        match &self.scope {
            Scope::Subagent(sub) => id
                .strip_prefix("subagents/")
                .and_then(|rest| rest.strip_prefix(sub.as_str()))
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|slug| slug == self.slug.as_str()),
            _ => id == self.slug.as_str(),
        }
    }
}

/// The interfaces `component` imports, each checked against the grants of
/// `settings`: a hook importing what it is not granted is refused.
fn checked_imports(
    engine: &wasmtime::Engine,
    component: &wasmtime::component::Component,
    built: &BuiltHook,
    settings: &HookSettings,
) -> Result<(Vec<String>, Vec<grants::ImportAudit>), Problem> {
    let imports: Vec<String> = component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let table = built.hook.scope.config_table(built.hook.slug.as_str());
    let profile = profile_of(&built.hook);
    let import_audit = grants::check(&imports, &settings.grants, &table, profile)
        .map_err(|m| Problem::load(&built.hook.path, m, "grant what can be granted in hookrt.toml (`http` also needs `http_allow`), and remove the use of anything that cannot"))?;
    Ok((imports, import_audit))
}

/// `subs` when a hook may subscribe to them; otherwise the problems and the
/// keys at fault.
/// A component over the size any hook needs is not compiled at all.
fn check_size(built: &BuiltHook) -> Result<(), Problem> {
    let max = crate::sandbox::limits::MAX_COMPONENT_BYTES;
    match std::fs::metadata(&built.component) {
        Ok(meta) if meta.len() > max => Err(Problem::load(
            &built.hook.path,
            format!(
                "is {} bytes, above the {} MiB a component may have: it is not compiled",
                meta.len(),
                max >> 20
            ),
            "a hook component is usually well under 10 MiB; build it in release mode and strip it",
        )),
        _ => Ok(()),
    }
}

/// The cache's MAC key, read once for the digest, the artifact and the start record.
fn cache_key(path: &Path, cache_dir: &Path) -> Result<[u8; dir::KEY_LEN], Problem> {
    dir::mac_key(cache_dir).map_err(|e| {
        cache_problem(
            path,
            artifact::CacheError::Io(format!(
                "cannot set up the cache key in {}: {e}",
                cache_dir.display()
            )),
        )
    })
}

fn cache_problem(path: &Path, e: artifact::CacheError) -> Problem {
    match e {
        artifact::CacheError::Invalid(e) => Problem::load(
            path,
            format!("is not a valid WebAssembly component: {e}"),
            "build it for wasm32-wasip2 as a component (cargo build --target wasm32-wasip2)",
        ),
        artifact::CacheError::Io(e) => Problem::load(
            path,
            format!("cannot cache its compiled artifact: {e}"),
            "check disk space and permissions of the cache dir",
        ),
        artifact::CacheError::Limits(e) => Problem::load(
            path,
            format!("does not fit hookrt's instance pool: {e}"),
            format!(
                "a hook runs in the pool with at most {} core instances, {} memories and {} tables; \
                 give this one more in its [hooks.\"<slug>\"] table of hookrt.toml (`instances`, `memories`, `tables`, \
                 e.g. `instances = 128`): a folder with a hook above those runs with on-demand allocation",
                crate::sandbox::limits::POOL_INSTANCES,
                crate::sandbox::limits::DEFAULT_MEMORIES,
                crate::sandbox::limits::DEFAULT_TABLES,
            ),
        ),
    }
}

/// Subscriptions refused: the problem points at the handlers the author
/// wrote (`bad`), not at the export.
fn subscriptions_problem(path: &Path, message: String, bad: &[String]) -> Problem {
    let places: Vec<String> = bad
        .iter()
        .filter_map(|k| key_location(path, k).map(|at| format!("`\"{k}\"` at {at}")))
        .collect();
    let fix = if places.is_empty() {
        "fix the hook's configuration (hookrt.toml) or what `subscriptions` returns".to_owned()
    } else {
        format!(
            "fix the handler's kind: {} (or write the hook with the SDK's typed `Hook` trait, whose method names are checked when it compiles)",
            places.join(", ")
        )
    };
    Problem::load(path, message, fix)
}

impl LoadedHook {
    /// What the hook's start depends on: the engine, the component, its
    /// world, id, configuration, grants and limits.
    fn start_key(&self, engine_id: &[u8; 32]) -> StartKey {
        let grants: Vec<&str> = self.settings.grants.iter().map(String::as_str).collect();
        StartKey::new(
            engine_id,
            &self.component_sha256,
            self.world_version,
            &self.id(),
            &self.config_json,
            &grants,
            &self.settings.limits,
        )
    }
}

fn check_subscriptions(subs: Vec<String>) -> Result<Vec<String>, (String, Vec<String>)> {
    let mut problems = Vec::new();
    let mut bad = Vec::new();
    if subs.is_empty() {
        problems.push("subscribes to no event".to_owned());
    }
    for (i, s) in subs.iter().enumerate() {
        if subs[..i].contains(s) {
            problems.push(format!("subscribes to `{s}` twice"));
            bad.push(s.clone());
        } else if let Some(other) = subs[..i]
            .iter()
            .find(|o| *o != kind::WILDCARD && kind::handled_kind(o) == kind::handled_kind(s))
        {
            problems.push(format!(
                "subscribes to both `{other}` and `{s}`: a hook has one handler per event (vote, rewrite and vote, or watch)"
            ));
            bad.push(s.clone());
        } else if !kind::is_subscribable(s) {
            problems.push(kind::subscription_problem(s));
            bad.push(s.clone());
        }
    }
    if problems.is_empty() {
        Ok(subs)
    } else {
        Err((problems.join("; "), bad))
    }
}

/// Where a hook's Rust source writes `"key"` (`file:line`): its file, or a
/// crate's `src/lib.rs`; `None` for a component or a key it does not spell.
fn key_location(source: &Path, key: &str) -> Option<String> {
    let file = if source.is_dir() {
        source.join("src").join("lib.rs")
    } else if source.extension().is_some_and(|e| e == "rs") {
        source.to_path_buf()
    } else {
        return None;
    };
    let text = crate::hooks::folder::plain::read_regular_text(&file).ok()?;
    let needle = format!("\"{key}\"");
    text.lines()
        .position(|l| l.contains(&needle))
        .map(|n| format!("{}:{}", file.display(), n + 1))
}

fn one_line(e: &wasmtime::Error) -> String {
    format!("{e:#}").lines().next().unwrap_or("").to_owned()
}
