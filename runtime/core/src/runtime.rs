//! The runtime: an agent folder loaded into the sandbox, ready for events.
//!
//! [`Runtime::load`] runs every stage (discovery, configuration, build,
//! precompile, link, subscriptions) and reports all problems of a stage at
//! once; [`Runtime::dispatch`] delivers one event.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::delivery::dispatch::{self, Kept, Loop, Ran};
use crate::delivery::record::{Dispatch, Resolution};
use crate::delivery::retry::Retries;
use crate::delivery::sink::Sink;
use crate::delivery::threads::Threads;
use crate::event::envelope::{Durability, Envelope, EnvelopeError};
use crate::event::scope::{Scope, Transport};
use crate::hooks::build::component::{self, BuildEvent, BuildOptions, BuiltHook};
use crate::hooks::cache::incremental::Incremental;
use crate::hooks::folder::config::{Config, Mode};
use crate::hooks::folder::discovery::{self, Discovery};
use crate::hooks::loaded::call::Services;
use crate::hooks::loaded::load::{self, LoadedHook};
use crate::hooks::loaded::lock::{Lock, LockPolicy, Review};
use crate::hooks::loaded::registry::Registry;
use crate::hooks::problem::{Problem, Problems};
use crate::hooks::project::{Project, ProjectError};
use crate::sandbox::engine::{self, Allocator, Links, Sandbox};
use crate::sandbox::grants::Profile;
use crate::sandbox::limits::Metering;
use crate::sandbox::metrics::Metrics;
use crate::sandbox::redaction::Redactor;
use crate::sandbox::state::StateStore;

/// An agent folder's hooks, loaded and ordered.
pub struct Runtime {
    sandbox: Sandbox,
    registry: Registry,
    agent_dir: PathBuf,
    state: Arc<StateStore>,
    metrics: Arc<Metrics>,
    transport: Transport,
    redactor: Redactor,
    threads: Threads,
    /// The lock that was looked for and not found (lock enforced, none
    /// there): the folder runs unreviewed.
    unlocked: Option<PathBuf>,
}

/// The static part of loading: discovery plus configuration, no building.
pub fn check(agent_dir: &Path) -> Result<(Discovery, Config), Problems> {
    let config = Config::load(agent_dir);
    let discovered = match &config {
        Ok(c) => c.discover(agent_dir),
        Err(_) => discovery::discover(agent_dir),
    };
    match (discovered, config) {
        (Ok(d), Ok(c)) => {
            Problems(c.check_against(&d)).into_result()?;
            Ok((d, c))
        }
        (d, c) => Err(Problems(
            d.err()
                .into_iter()
                .chain(c.err())
                .flat_map(|p| p.0)
                .collect(),
        )),
    }
}

/// The cache dir holds the MAC key and the artifacts loaded as native code:
/// inside the agent folder, the hook author would control both.
fn cache_outside(agent_dir: &Path, cache_dir: &Path) -> Result<(), Problems> {
    // The cache may not exist yet: compare its nearest existing ancestor.
    let resolve = |p: &Path| {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        abs.ancestors()
            .find_map(|a| {
                a.canonicalize()
                    .ok()
                    .map(|c| c.join(abs.strip_prefix(a).unwrap_or(Path::new(""))))
            })
            .unwrap_or(abs)
    };
    if let Some(why) = crate::hooks::cache::dir::unsafe_dir(cache_dir) {
        return Err(Problems(vec![Problem::build(
            cache_dir,
            format!(
                "the cache dir {why}: whoever can write it could plant compiled artifacts or the cache's key"
            ),
            "use a private folder of your own (0700): set HOOKRT_CACHE_DIR or --cache-dir, or HOME",
        )]));
    }
    if resolve(cache_dir).starts_with(resolve(agent_dir)) {
        return Err(Problems(vec![Problem::build(
            cache_dir,
            "the cache dir is inside the agent folder, whose author could plant compiled artifacts and the cache's key there",
            "leave the default per-user cache dir, or pass a --cache-dir (HOOKRT_CACHE_DIR) outside the agent folder",
        )]));
    }
    Ok(())
}

/// Loads every built hook (deserialize or compile, link, configure, ask for
/// subscriptions), on as many threads as there are cores: hooks are
/// independent, so 100 cached hooks or 10 that need Cranelift are ready in
/// about a core's share of the time. Results come back in `built`'s order.
fn load_all(
    sandbox: &Sandbox,
    built: &[BuiltHook],
    config: &Config,
    opts: &BuildOptions,
    scratch: &Arc<StateStore>,
    project: &Result<Project, ProjectError>,
) -> Vec<Result<LoadedHook, Problem>> {
    let next = AtomicUsize::new(0);
    // Each thread takes the next hook until none is left, and returns what it loaded.
    let work = || {
        let mut loaded = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(b) = built.get(i) else {
                return loaded;
            };
            let settings = config.settings_for(&b.hook);
            loaded.push((
                i,
                // A load problem can quote the hook (its `configure` refusal,
                // its subscriptions): masked like everything else it writes.
                LoadedHook::load(sandbox, b, settings, &opts.cache_dir, scratch, project).map_err(
                    |mut p| {
                        p.message = config.redactor().mask(&p.message).into_owned();
                        p
                    },
                ),
            ));
        }
    };
    let threads = engine::cores().min(built.len());
    let mut all = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut all = work();
        for h in helpers {
            all.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        all
    });
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, loaded)| loaded).collect()
}

/// The lock (when there is one) and each hook's review: its id, source and
/// what the lock pins of it.
type Locked = (Option<Lock>, Vec<(String, PathBuf, Review)>);

/// Each discovered hook's review (its id, source and what the lock pins of
/// it), and, when the lock is enforced and there is one, the lock, checked
/// against them: a drift, a missing lock that `--require-lock` asks for, or
/// an unreadable lock is a refusal before anything builds. Without a lock
/// (and not required) the folder loads unlocked ([`Runtime::unlocked`]).
fn locked(
    agent_dir: &Path,
    discovery: &Discovery,
    config: &Config,
    opts: &BuildOptions,
) -> Result<Locked, Problems> {
    let mut problems = Vec::new();
    let mut reviews = Vec::new();
    for hook in &discovery.hooks {
        match Review::of(hook, config) {
            Ok(r) => reviews.push((hook.scope.hook_id(hook.slug.as_str()), hook.path.clone(), r)),
            Err(p) => problems.push(p),
        }
    }
    Problems(problems).into_result()?;
    if !opts.enforce_lock {
        return Ok((None, reviews));
    }
    let path = opts.lock.path(agent_dir);
    let Some(lock) = read_lock(agent_dir, &opts.lock)? else {
        return match grant_needing_lock(discovery, config) {
            Some((id, grant)) => Err(Problems(vec![Problem::lock(
                &path,
                format!(
                    "hook `{id}` holds the `{grant}` grant, whose table only a lock may vouch for, and there is no lock"
                ),
                "review its table in hookrt.toml, then pin the folder with `hookrt lock DIR`",
            )])),
            None => Ok((None, reviews)),
        };
    };
    let mut drifted = lock.check_reviews(&path, &reviews);
    drifted.sort_by(|a, b| a.path.cmp(&b.path));
    Problems(drifted).into_result()?;
    Ok((Some(lock), reviews))
}

/// The lock `policy` names for `agent_dir`, read as every load reads it:
/// `None` when there is none, a refusal when it cannot be read or when
/// `--require-lock` asks for one that is not there.
pub fn read_lock(agent_dir: &Path, policy: &LockPolicy) -> Result<Option<Lock>, Problems> {
    let path = policy.path(agent_dir);
    match Lock::read(&path) {
        Ok(Some(lock)) => Ok(Some(lock)),
        Ok(None) if policy.required => Err(Problems(vec![Problem::lock(
            &path,
            "there is no lock, and --require-lock asks for one",
            "review the folder, then pin it with `hookrt lock DIR` (or give the lock with --lock FILE)",
        )])),
        Ok(None) => Ok(None),
        Err(p) => Err(Problems(vec![p])),
    }
}

/// The first hook (its id) holding a grant whose table is operator
/// configuration (`exec`), and that grant: such a folder loads only locked.
fn grant_needing_lock(discovery: &Discovery, config: &Config) -> Option<(String, &'static str)> {
    discovery.hooks.iter().find_map(|h| {
        crate::sandbox::grant::needing_lock(&config.settings_for(h).grants)
            .map(|g| (h.scope.hook_id(h.slug.as_str()), g.name))
    })
}

/// The sandbox `discovery`'s hooks run in, configured by `config`.
fn sandbox_for(
    agent_dir: &Path,
    discovery: &Discovery,
    config: &Config,
    opts: &BuildOptions,
    functions: Option<&Arc<Incremental>>,
) -> Result<Sandbox, Problems> {
    // The pool's slots have fixed sizes: hooks configured beyond them, or
    // too many hooks, run with on-demand allocation; so does a runtime
    // for one event.
    let fits = !opts.one_shot
        && discovery.hooks.len() <= engine::POOL_MAX_HOOKS
        && discovery
            .hooks
            .iter()
            .all(|h| engine::fits_pool(&config.settings_for(h).limits));
    let want = if fits {
        Allocator::Pooling
    } else {
        Allocator::OnDemand
    };
    let epoch_only = discovery
        .hooks
        .iter()
        .any(|h| config.settings_for(h).limits.metering == Metering::Epoch);
    let links = Links {
        python: discovery
            .hooks
            .iter()
            .any(|h| load::profile_of(h) == Profile::Python),
        http: discovery
            .hooks
            .iter()
            .any(|h| config.settings_for(h).grants.contains("http")),
    };
    let functions: Option<engine::FunctionCache> = functions.cloned().map(|f| f as _);
    Sandbox::for_hooks(want, epoch_only, discovery.hooks.len(), links, functions)
        .map_err(|e| Problems(vec![Problem::sandbox(agent_dir, e.to_string(), e.fix())]))
}

impl Runtime {
    /// [`Runtime::load`] for a caller outside async code, with build
    /// progress: discovers, builds what is stale, loads every hook.
    pub fn load_blocking(
        agent_dir: &Path,
        opts: &BuildOptions,
        progress: &mut dyn FnMut(BuildEvent),
    ) -> Result<Runtime, Problems> {
        let (discovery, config) = check(agent_dir)?;
        for path in &discovery.ignored {
            tracing::warn!(
                "{} is not a hook (only .rs files, crates and .wasm components are); left alone",
                path.display()
            );
        }
        cache_outside(agent_dir, &opts.cache_dir)?;
        // The stricter mode wins: the folder or the operator can ask for `prebuilt`.
        let opts = &BuildOptions {
            prebuilt: opts.prebuilt || config.mode == Mode::Prebuilt,
            ..opts.clone()
        };
        // Cranelift's functions compiled before: an edited script hook
        // compiles only what changed.
        let functions = Incremental::for_load(&opts.cache_dir);
        let sandbox = sandbox_for(agent_dir, &discovery, &config, opts, functions.as_ref())?;
        // The lock is checked before anything builds: a drifted crate's
        // `build.rs` never runs.
        let (lock, reviews) = locked(agent_dir, &discovery, &config, opts)?;
        let (built, mut problems) = component::build(&discovery.hooks, opts, progress);
        // Load-time calls (configure, subscriptions) store into one throw-away place.
        let scratch = StateStore::in_memory();
        let project = Project::decide(opts.project.as_deref());
        let mut hooks = Vec::new();
        for loaded in load_all(&sandbox, &built, &config, opts, &scratch, &project) {
            match loaded {
                Ok(mut h) => {
                    if h.scope == Scope::Primary && config.is_aggregate(&h.slug) {
                        h.scope = Scope::Aggregate;
                    }
                    hooks.push(h)
                }
                Err(p) => problems.push(p),
            }
        }
        if let Some(functions) = &functions {
            functions.finish();
        }
        for h in &mut hooks {
            if let Some((_, _, review)) = reviews.iter().find(|(id, _, _)| h.has_id(id)) {
                h.reviewed = (review.files_sha256.clone(), review.settings.clone());
            }
        }
        let unlocked = match &lock {
            Some(lock) => {
                problems.extend(lock.check(&opts.lock.path(agent_dir), &hooks));
                None
            }
            None if opts.enforce_lock => Some(opts.lock.path(agent_dir)),
            None => None,
        };
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        Problems(problems).into_result()?;
        tracing::debug!(allocator = sandbox.allocator().name(), "engine ready");
        for h in &hooks {
            tracing::debug!(hook = %h.slug, cargo_built = h.cargo_built, cranelift_compiled = h.compiled, "loaded");
        }
        let redactor = config.redactor().with_secrets(&secret_values(&hooks));
        Ok(Runtime {
            sandbox,
            registry: Registry::new(hooks, &config, project.ok()),
            agent_dir: agent_dir.to_path_buf(),
            state: StateStore::in_memory(),
            metrics: Metrics::new(),
            transport: Transport::default(),
            redactor,
            threads: Threads::default(),
            unlocked,
        })
    }

    /// Loads `agent_dir`: discovers, builds what is stale, loads every hook.
    /// On a blocking thread ([`Runtime::load_blocking`]): cargo and Cranelift
    /// may take seconds, reading 100 cached hooks a few ms.
    pub async fn load(agent_dir: PathBuf, opts: BuildOptions) -> Result<Runtime, Problems> {
        let loaded = tokio::task::spawn_blocking(move || {
            Runtime::load_blocking(&agent_dir, &opts, &mut |_| {})
        })
        .await;
        match loaded {
            Ok(runtime) => runtime,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Where the lock was looked for and not found, when the folder loaded
    /// unlocked (any change to its hooks runs unreviewed): front ends warn
    /// (`hookrt check`, `serve`, `worker`). `None` when it is locked, or the
    /// lock was not enforced.
    pub(crate) fn unlocked(&self) -> Option<&Path> {
        self.unlocked.as_deref()
    }

    /// The warning a front end prints for an unlocked folder, when it is.
    pub fn unlocked_warning(&self) -> Option<String> {
        self.unlocked()
            .map(|lock| unlocked_warning(&self.agent_dir, lock))
    }

    /// What an author who ran the working copy (`hookrt check`, `hookrt
    /// test`: loaded with the lock not enforced) is told about `lock`, read
    /// before the load with [`read_lock`]: one line naming every drift and
    /// how to accept it, the unlocked warning when there is no lock, `None`
    /// when the folder is as locked. Loads for agents, `serve`, `run` and
    /// the service refuse the same drift.
    pub fn working_copy_warning(&self, lock: Option<&Lock>, policy: &LockPolicy) -> Option<String> {
        let path = policy.path(&self.agent_dir);
        let Some(lock) = lock else {
            return Some(unlocked_warning(&self.agent_dir, &path));
        };
        let drift: Vec<String> = lock
            .check(&path, self.hooks())
            .into_iter()
            .map(|p| p.message)
            .collect();
        if drift.is_empty() {
            return None;
        }
        let dir = self.agent_dir.display();
        let flag = policy
            .file
            .as_ref()
            .map(|f| format!(" --lock {}", f.display()))
            .unwrap_or_default();
        Some(format!(
            "ran the working copy, which drifted from its lock ({}); agents, `serve`, `run` and the service refuse it until you review the change and accept it with `hookrt lock {dir}{flag}`",
            drift.join("; ")
        ))
    }

    /// For an author's working copy (`check`, `test`, which run a drifted
    /// folder): the hooks holding a grant whose table only a lock may vouch
    /// for (`exec`) that `lock` does not pin as they are. Such a hook runs
    /// only as locked, whatever else may run drifted.
    pub fn unpinned_operator_grants(&self, lock: Option<&Lock>, policy: &LockPolicy) -> Problems {
        let path = policy.path(&self.agent_dir);
        Problems(crate::hooks::loaded::lock::unpinned_operator_grants(
            lock,
            &path,
            self.hooks(),
        ))
    }

    /// The loaded hooks, in registration order.
    pub fn hooks(&self) -> &[LoadedHook] {
        self.registry.hooks()
    }

    pub(crate) fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Where instances' memories come from (the pool, unless it did not fit).
    pub fn allocator(&self) -> Allocator {
        self.sandbox.allocator()
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Where hooks' `state` lives (in memory until [`Runtime::use_state`]).
    pub fn state(&self) -> &Arc<StateStore> {
        &self.state
    }

    /// What hooks reported through the `metrics` import.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Delivers on `threads` threads, the caller's included (default 1:
    /// everything one after another): each tool approval's
    /// (`actions.requested`) hooks side by side, and in a service, runs of
    /// events in lanes. The resolution and the order of the deliveries are
    /// the same either way; only the latency changes. Starts `threads - 1`
    /// threads, kept until the runtime is dropped.
    pub fn set_threads(&mut self, threads: usize) -> std::io::Result<()> {
        self.threads = Threads::new(threads)?;
        Ok(())
    }

    /// The runtime's delivery threads ([`Runtime::set_threads`]).
    pub fn threads(&self) -> &Threads {
        &self.threads
    }

    /// Tells hooks how events reach them (default `in-process`).
    pub fn set_transport(&mut self, transport: Transport) {
        self.transport = transport;
    }

    /// What a call into a hook needs.
    pub(crate) fn services(&self) -> Services<'_> {
        Services {
            sandbox: &self.sandbox,
            state: &self.state,
            metrics: &self.metrics,
            transport: &self.transport,
            redactor: &self.redactor,
        }
    }

    /// Keeps hooks' `state` in `store` from now on (the service points it at
    /// the journal database so state survives restarts).
    pub fn use_state(&mut self, store: Arc<StateStore>) {
        self.state = store;
    }

    /// Keeps hooks' `state` (and the loop governor's counts) for this agent
    /// folder in a database of the user's (`$HOOKRT_STATE_DIR`, else
    /// `state/` under hookrt's per-user folder, 0700; one file per folder,
    /// named by a digest of its canonical path), for a process that runs one
    /// event and ends (`hookrt claude-hook`): what a hook keeps, and how many
    /// times in a row a turn was kept going, outlive the process. Returns the
    /// file. Never inside the agent folder: its author could plant one.
    pub fn keep_state_per_user(&mut self) -> std::io::Result<PathBuf> {
        use sha2::{Digest, Sha256};
        let dir = crate::hooks::cache::dir::per_user_dir("HOOKRT_STATE_DIR", Some("state"))
            .ok_or_else(|| std::io::Error::other("no home folder"))?;
        if let Some(why) = crate::hooks::cache::dir::unsafe_dir(&dir) {
            return Err(std::io::Error::other(format!("{} {why}", dir.display())));
        }
        crate::hooks::cache::dir::create_private_dir(&dir)?;
        let canonical = self.agent_dir.canonicalize()?;
        let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
        let path = dir.join(format!("{}.db", hex::encode(&digest[..16])));
        self.state = StateStore::open(&path).map_err(std::io::Error::other)?;
        Ok(path)
    }

    /// Takes over what a running service gave `old`: its cancel flag, hooks'
    /// `state`, hooks' `metrics`, the transport and the number of delivery
    /// threads, so a reload swaps the hooks and nothing else (hooks keep their state; shutdown stops them).
    pub(crate) fn adopt(&mut self, old: &Runtime) {
        self.sandbox.share_cancel(old.sandbox.cancel_flag());
        self.state = old.state.clone();
        self.metrics = old.metrics.clone();
        self.transport = old.transport.clone();
        if self.threads.threads() != old.threads.threads() {
            // Still correct on one thread, only slower.
            self.threads = Threads::new(old.threads.threads()).unwrap_or_default();
        }
    }

    /// The agent folder this runtime was loaded from.
    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    /// Replay mode from now on: fixed clocks and randomness for every new
    /// instance ([`Sandbox::pin`]); see [`crate::replay`].
    pub(crate) fn pin(&self) {
        self.sandbox.pin();
    }

    /// Delivers one event to every subscribed handler, once each. Without a
    /// journal the runtime holds the event in memory only, so hooks see
    /// `accepted`.
    pub fn dispatch(&self, envelope: &Envelope) -> Result<Dispatch, EnvelopeError> {
        let mut kept = Kept::default();
        let cx = self.event_loop(Retries::BySource { may_retry: false });
        let ran = dispatch::run_planned(&cx, envelope, Durability::Accepted, None, &mut kept)?;
        let resolution = match ran {
            Ran::Resolved(r) => r,
            Ran::Left => None,
        };
        Ok(kept.into_dispatch(envelope, resolution))
    }

    /// Delivers one event, held as `durability` elsewhere (a JetStream
    /// stream), through the one event loop to every subscribed handler
    /// except those `skip(hook id, handler)` names, one attempt each:
    /// `sink` hears each delivery as it ends and whether its source is to
    /// run it again ([`Retries::BySource`]). A fleet worker (`hookrt
    /// worker`) uses it to record each finished delivery at once and, on a
    /// redelivery, to run only what is left. Returns what the event decided.
    pub fn dispatch_into(
        &self,
        envelope: &Envelope,
        durability: Durability,
        skip: &dyn Fn(&str, &str) -> bool,
        retries: Retries,
        sink: &mut (dyn Sink + Sync),
    ) -> Result<Option<Resolution>, EnvelopeError> {
        let cx = self.event_loop(retries);
        match dispatch::run_planned(&cx, envelope, durability, Some(skip), sink)? {
            Ran::Resolved(r) => Ok(r),
            Ran::Left => Ok(None),
        }
    }

    /// The one event loop over this runtime's hooks and delivery threads.
    pub(crate) fn event_loop(&self, retries: Retries) -> Loop<'_> {
        Loop {
            services: self.services(),
            threads: &self.threads,
            registry: &self.registry,
            retries,
        }
    }

    /// The redactor of the agent folder's `hookrt.toml`: what masks secrets
    /// in what hooks write before it leaves the process.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

/// The values of `hooks`' secrets (name, value): the runtime's redactor
/// masks them as a class of their own.
fn secret_values(hooks: &[LoadedHook]) -> Vec<(String, String)> {
    hooks
        .iter()
        .flat_map(|h| h.held.iter().flat_map(|(_, held)| held.masked()))
        .collect()
}

/// What a front end says of a folder that loaded without the lock at `lock`.
fn unlocked_warning(agent_dir: &Path, lock: &Path) -> String {
    format!(
        "{} is not locked ({} is missing): any change to its hooks runs unreviewed; after a review pin it with `hookrt lock`, and load it with --require-lock",
        agent_dir.display(),
        lock.display()
    )
}
