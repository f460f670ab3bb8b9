//! The sandbox: the one place that owns Wasmtime's `Engine` configuration.
//!
//! Everything that narrows Wasmtime to what hookrt uses lives here (like
//! `spin-core`): fuel and epoch interruption on, the WASI p2 imports linked with
//! nothing granted, the host imports of the `define-hook` world, and the epoch
//! ticker that turns wall-clock deadlines into interrupts (`ticker.rs`, armed
//! by [`begin_delivery`]). Hooks that opt into
//! epoch-only metering (`metering = "epoch"`) run on a second engine, built
//! only when one does, that compiles no fuel counting into them: fuel is an
//! engine-wide setting compiled into the code, not a per-store switch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store,
    UpdateDeadline,
};

use crate::sandbox::grant;
use crate::sandbox::host::StoreData;
use crate::sandbox::http::HttpPolicy;
use crate::sandbox::limits::{Limits, Metering};
use crate::sandbox::metrics::MetricsAccess;
use crate::sandbox::state::StateAccess;
use crate::sandbox::wit::{v0_1_0, v0_2_0, v0_3_0, v0_4_0};

use crate::sandbox::ticker::Ticker;

/// Why the sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// `HOOKRT_ALLOCATOR` holds something else than `auto` or `on-demand`.
    #[error(
        "cannot set up the Wasmtime sandbox: HOOKRT_ALLOCATOR={0:?} is not `auto` or `on-demand`"
    )]
    Allocator(String),
    /// Wasmtime refused the engine or the linker, or the ticker did not start.
    #[error("cannot set up the Wasmtime sandbox: {0}")]
    Setup(String),
}

impl SandboxError {
    /// What to do about it.
    pub(crate) fn fix(&self) -> &'static str {
        match self {
            SandboxError::Allocator(_) => {
                "unset HOOKRT_ALLOCATOR, or set it to `auto` or `on-demand`"
            }
            SandboxError::Setup(_) => "report this as a bug",
        }
    }
}

/// One engine and linker per metering in use, one epoch ticker: shared by
/// every hook.
pub struct Sandbox {
    fuel: Flavor,
    /// For hooks under [`Metering::Epoch`]; built only when one is loaded.
    epoch: Option<Flavor>,
    allocator: Allocator,
    cancel: Arc<AtomicBool>,
    /// Replay mode: stores created from now on see a fixed clock and fixed
    /// randomness (see [`Sandbox::pin`]).
    pinned: AtomicBool,
    ticker: Ticker,
}

/// The host interfaces a sandbox links besides the baseline and hookrt's
/// own: only what some hook it runs may import. Linking is a host function
/// and its type at a time: all of WASI was a twentieth of a process that
/// runs one event (`hookrt claude-hook`). A hook's imports are checked
/// against its grants and profile before it is linked (`grants::check`),
/// so one that is not linked here is refused with that check's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Links {
    /// `wasi:filesystem` and `wasi:sockets`, inert: a Python hook's.
    pub python: bool,
    /// `wasi:http`'s outgoing side: a hook with the `http` grant.
    pub http: bool,
}

/// An engine and the linker of the host imports on it.
struct Flavor {
    engine: Engine,
    linker: Linker<StoreData>,
    /// [`compatibility_id`] of the engine, worked out once.
    id: std::sync::OnceLock<[u8; 32]>,
}

/// Feeds `Hash` output into SHA-256, to turn the engine's compatibility hash
/// (only `impl Hash`) into stable bytes.
struct Sha256Hasher(Sha256);

impl std::hash::Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        let d = self.0.clone().finalize();
        u64::from_le_bytes(d[..8].try_into().unwrap_or_default())
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The engine's compatibility hash as 32 bytes: what names its artifacts.
fn compatibility_id(engine: &Engine) -> [u8; 32] {
    use std::hash::Hash as _;
    let mut h = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut h);
    h.0.finalize().into()
}

impl Flavor {
    fn new(engine: Engine, links: Links) -> Result<Flavor, SandboxError> {
        let mut linker = Linker::new(&engine);
        let setup = |e: wasmtime::Error| SandboxError::Setup(e.to_string());
        crate::sandbox::host::link_wasi(&mut linker).map_err(setup)?;
        if links.python {
            crate::sandbox::host::link_wasi_inert(&mut linker).map_err(setup)?;
        }
        if links.http {
            // Importable only with the `http` grant (checked at load).
            (grant::http::GRANT.link)(&mut linker).map_err(setup)?;
        }
        // Every supported world version's host imports, side by side: their
        // interface names carry the version, so they never collide.
        grant::link(&mut linker).map_err(setup)?;
        Ok(Flavor {
            engine,
            linker,
            id: std::sync::OnceLock::new(),
        })
    }
}

/// Where instances' memories and tables come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// Slots reserved once when the engine starts and reused: a fresh
    /// instance per delivery maps no memory.
    Pooling,
    /// Mapped per instance and unmapped when it is dropped.
    OnDemand,
}

impl Allocator {
    /// Its name in logs.
    pub fn name(self) -> &'static str {
        match self {
            Allocator::Pooling => "pooling",
            Allocator::OnDemand => "on-demand",
        }
    }
}

/// Most threads that deliver at once in one runtime (a service's workers are
/// cut to this): the pooling allocator keeps a fresh-instance slot for each,
/// so the pool is sized from it.
pub(crate) const MAX_THREADS: usize = 64;

/// Most hooks a runtime may have for the pool to be chosen.
pub(crate) const POOL_MAX_HOOKS: usize = 200;

/// Component instances the pool holds for a runtime of `hooks` hooks (at
/// most [`POOL_MAX_HOOKS`]): a warm instance for each hook, a fresh one per
/// worker in flight ([`MAX_THREADS`]), and one per loading thread. Each gets
/// room for the most core instances, memories and tables a hook's limits
/// allow, so the pool cannot run out. Sized by the hooks a runtime has (a
/// reload builds a new one), not the most any may have: a process that
/// runs one event with three hooks (`hookrt claude-hook`) sets up a quarter
/// of the slots.
pub(crate) fn pool_components(hooks: usize) -> u32 {
    (hooks.min(POOL_MAX_HOOKS) + MAX_THREADS + cores()) as u32
}

/// The processors this process may use (`available_parallelism`, at least
/// 1), read once: each read walks the cgroup files, and a process per event
/// (`hookrt claude-hook`) would read them three times.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Bytes at the bottom of each pooled linear memory kept resident between
/// instances and reset in place (a JSON-parsing Rust hook dirties a few
/// hundred KiB per delivery).
pub(crate) const POOL_KEEP_RESIDENT: usize = 1 << 20;
/// Idle pool slots kept warm (resident) for reuse. A slot remembers the
/// last hook's memory image: with fewer warm slots than fresh hooks, every
/// fresh delivery found none of its own and mapped its image again (two
/// `mmap`s, a TLB flush on every core running a worker).
pub(crate) const POOL_WARM_SLOTS: u32 = 64;

/// Whether hooks with these limits fit the pool's fixed slot sizes.
pub(crate) fn fits_pool(limits: &Limits) -> bool {
    limits.table_elements <= crate::sandbox::limits::DEFAULT_TABLE_ELEMENTS
        && limits.instances <= crate::sandbox::limits::POOL_INSTANCES
        && limits.tables <= crate::sandbox::limits::DEFAULT_TABLES
        && limits.memories <= crate::sandbox::limits::DEFAULT_MEMORIES
}

/// The engine settings hookrt runs hooks under with `allocator` (public so
/// benchmarks can hold raw Wasmtime to the same settings).
pub fn engine_config(allocator: Allocator) -> Config {
    engine_config_metered(allocator, Metering::Fuel)
}

/// [`engine_config`] for hooks under `metering`.
pub fn engine_config_metered(allocator: Allocator, metering: Metering) -> Config {
    match allocator {
        Allocator::Pooling => pooling_config(metering, POOL_MAX_HOOKS),
        Allocator::OnDemand => base_config(metering),
    }
}

/// The engine settings every hook runs under.
fn base_config(metering: Metering) -> Config {
    let mut config = Config::new();
    // Fuel bounds CPU per delivery deterministically; epochs bound wall time
    // (including time spent in host calls, which fuel does not see). Hooks
    // that opt out of fuel keep the epoch deadline.
    config.consume_fuel(metering == Metering::Fuel);
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    config.parallel_compilation(true);
    config
}

fn pooling_config(metering: Metering, hooks: usize) -> Config {
    use crate::sandbox::limits::{
        DEFAULT_MEMORIES, DEFAULT_TABLE_ELEMENTS, DEFAULT_TABLES, POOL_INSTANCES,
    };
    let components = pool_components(hooks);
    let mut pool = PoolingAllocationConfig::default();
    // Core instances are only counted by the pool (no slot is reserved for
    // one): room for the most any pooled hook may have costs nothing.
    pool.total_component_instances(components)
        .total_core_instances(components * POOL_INSTANCES as u32)
        .total_memories(components * DEFAULT_MEMORIES as u32)
        .total_tables(components * DEFAULT_TABLES as u32)
        .max_memory_size(crate::sandbox::limits::MAX_MEMORY_BYTES as usize)
        .table_elements(DEFAULT_TABLE_ELEMENTS as usize)
        .max_core_instances_per_component(POOL_INSTANCES as u32)
        .max_tables_per_component(DEFAULT_TABLES as u32)
        .max_memories_per_component(DEFAULT_MEMORIES as u32)
        // Hooks are called synchronously: no fiber stacks (1,000 guarded
        // stacks by default took most of the pool's 3 ms start and drop).
        .total_stacks(0)
        // Resetting a slot with madvise makes every other core running one of
        // our threads flush its TLB (an IPI each): with two workers that cost
        // more than the deliveries. Instead keep the low pages of each slot
        // resident and reset only the pages a delivery dirtied (found with
        // Linux's PAGEMAP_SCAN, 6.7+; plain memset of the low pages before).
        .linear_memory_keep_resident(POOL_KEEP_RESIDENT)
        .table_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto)
        // At most POOL_WARM_SLOTS idle slots stay warm: bounds what the kept
        // pages add to RSS.
        .max_unused_warm_slots(POOL_WARM_SLOTS)
        // Each freed slot is ready again at once: a batch held freed slots
        // back, so the next delivery of the same hook took another slot and
        // mapped its image there.
        .decommit_batch_size(1);
    let mut config = base_config(metering);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config
}

/// Builds the engine with the pooling allocator when `want` allows it and
/// the machine lets it reserve its address space (as Spin probes: some hosts
/// cap virtual memory), else with on-demand allocation.
/// `HOOKRT_ALLOCATOR=on-demand` turns the pool off (`auto` is the default).
fn engine(
    want: Allocator,
    metering: Metering,
    hooks: usize,
    incremental: Option<&FunctionCache>,
) -> Result<(Engine, Allocator), SandboxError> {
    let want = match std::env::var("HOOKRT_ALLOCATOR").as_deref() {
        Err(_) | Ok("") | Ok("auto") => want,
        Ok("on-demand") => Allocator::OnDemand,
        Ok(other) => {
            return Err(SandboxError::Allocator(other.to_owned()));
        }
    };
    let build = |mut config: Config| {
        if let Some(store) = incremental {
            config
                .enable_incremental_compilation(store.clone())
                .map_err(|e| SandboxError::Setup(e.to_string()))?;
        }
        Engine::new(&config).map_err(|e| SandboxError::Setup(e.to_string()))
    };
    let on_demand = || build(base_config(metering));
    match want {
        Allocator::OnDemand => Ok((on_demand()?, Allocator::OnDemand)),
        Allocator::Pooling => match build(pooling_config(metering, hooks)) {
            Ok(engine) => Ok((engine, Allocator::Pooling)),
            Err(e) => {
                tracing::info!("pooling allocator unavailable ({e}); allocating on demand");
                Ok((on_demand()?, Allocator::OnDemand))
            }
        },
    }
}

/// Where Cranelift keeps the functions it compiled, to take them again
/// instead of compiling them (`hooks/cache/incremental.rs`).
pub(crate) type FunctionCache = Arc<dyn wasmtime::CacheStore>;

impl Sandbox {
    /// Builds the engines (the pooling allocator if `want` and the machine
    /// allow it; a second engine for [`Metering::Epoch`] hooks when
    /// `epoch_only`) and linker, with a pool for `hooks` hooks
    /// ([`pool_components`]): a runtime never loads more than it discovered;
    /// linking only `links`; compiling through `incremental` when given.
    pub(crate) fn for_hooks(
        want: Allocator,
        epoch_only: bool,
        hooks: usize,
        links: Links,
        incremental: Option<FunctionCache>,
    ) -> Result<Sandbox, SandboxError> {
        let incremental = incremental.as_ref();
        let (fuel_engine, allocator) = engine(want, Metering::Fuel, hooks, incremental)?;
        let fuel = Flavor::new(fuel_engine, links)?;
        let epoch = if epoch_only {
            // The same allocator as the fuel engine got (or on demand, should
            // the machine refuse a second pool).
            Some(Flavor::new(
                engine(allocator, Metering::Epoch, hooks, incremental)?.0,
                links,
            )?)
        } else {
            None
        };
        let engines = std::iter::once(&fuel)
            .chain(&epoch)
            .map(|f| f.engine.clone())
            .collect();
        let ticker = Ticker::start(engines)
            .map_err(|e| SandboxError::Setup(format!("epoch ticker thread: {e}")))?;
        Ok(Sandbox {
            fuel,
            epoch,
            allocator,
            cancel: Arc::new(AtomicBool::new(false)),
            pinned: AtomicBool::new(false),
            ticker,
        })
    }

    /// Whether shutdown set the cancel flag: running deliveries are
    /// interrupted at the next epoch tick, later ones at once.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The cancel flag, for the service to set at shutdown from another thread.
    pub(crate) fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Makes `flag` this sandbox's cancel flag: a runtime swapped into a
    /// running service by a reload is stopped by the service's shutdown like
    /// the one it replaced. Only before any store was made (the service's
    /// dispatcher calls it before the first delivery).
    pub(crate) fn share_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = flag;
    }

    /// The engine hooks under `metering` run on.
    pub(crate) fn engine_for(&self, metering: Metering) -> &Engine {
        &self.flavor(metering).engine
    }

    /// The id of the engine hooks under `metering` run on: its compatibility
    /// hash as 32 bytes, which names their cached artifacts. Worked out once
    /// per engine (hashing the engine's settings was a fiftieth of loading
    /// a hook from the cache).
    pub(crate) fn engine_id(&self, metering: Metering) -> [u8; 32] {
        let flavor = self.flavor(metering);
        *flavor.id.get_or_init(|| compatibility_id(&flavor.engine))
    }

    /// The engine and linker of `metering`. Only hooks whose settings were
    /// known when the sandbox was built are loaded, so an epoch-only hook
    /// always finds its engine; the fuel engine is the safe fallback.
    fn flavor(&self, metering: Metering) -> &Flavor {
        match (metering, &self.epoch) {
            (Metering::Epoch, Some(epoch)) => epoch,
            _ => &self.fuel,
        }
    }

    /// Which allocator the engine uses.
    pub(crate) fn allocator(&self) -> Allocator {
        self.allocator
    }

    /// Links `component` (compiled for [`Sandbox::engine_for`] `metering`)
    /// against the host imports and checks it implements the world.
    pub(crate) fn prepare(
        &self,
        component: &Component,
        metering: Metering,
    ) -> wasmtime::Result<Prepared> {
        let flavor = self.flavor(metering);
        let pre = flavor.linker.instantiate_pre(component)?;
        // 0.4.0 kept 0.3.0's exports and types, so a 0.3.0 hook also passes
        // as 0.4.0: its imports' version says which it is.
        let v3 = component
            .component_type()
            .imports(&flavor.engine)
            .any(|(name, _)| name.starts_with("hookrt:hook/") && name.ends_with("@0.3.0"));
        if v3 && let Ok(p) = v0_3_0::DefineHookPre::new(pre.clone()) {
            return Ok(Prepared::V3(p));
        }
        // The newest version's complaint is the useful one.
        let newest = match v0_4_0::DefineHookPre::new(pre.clone()) {
            Ok(p) => return Ok(Prepared::V4(p)),
            Err(newest) => newest,
        };
        if let Ok(p) = v0_3_0::DefineHookPre::new(pre.clone()) {
            return Ok(Prepared::V3(p));
        }
        if let Ok(p) = v0_2_0::DefineHookPre::new(pre.clone()) {
            return Ok(Prepared::V2(p));
        }
        v0_1_0::DefineHookPre::new(pre)
            .map(Prepared::V1)
            .map_err(|_| newest)
    }

    /// A store for one hook with `limits` applied; fuel and deadline are set per
    /// delivery by [`begin_delivery`].
    pub(crate) fn new_store(
        &self,
        limits: &Limits,
        state: StateAccess,
        metrics: MetricsAccess,
        http: HttpPolicy,
    ) -> Store<StoreData> {
        let mut data = StoreData::new(
            limits,
            self.cancel.clone(),
            self.ticker.window(),
            state,
            metrics,
            http,
        );
        if self.pinned() {
            data.pin();
        }
        let mut store = Store::new(self.engine_for(limits.metering), data);
        store.limiter(|s| &mut s.limiter);
        store.epoch_deadline_callback(|mut cx| {
            if cx.data_mut().check_interrupt() {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        store
    }
}

impl Sandbox {
    /// Replay mode, for good: every store created from now on reads a fixed
    /// wall clock, a monotonic clock that never moves and a fixed random
    /// sequence, and hooks are told their whole deadline as their budget, so
    /// the same events give the same deliveries (`hookrt test`).
    pub(crate) fn pin(&self) {
        self.pinned.store(true, Ordering::Relaxed);
    }

    /// Whether [`Sandbox::pin`] was called.
    pub(crate) fn pinned(&self) -> bool {
        self.pinned.load(Ordering::Relaxed)
    }
}

/// A component linked and checked against one world version.
pub(crate) enum Prepared {
    /// Built against `hookrt:hook/define-hook@0.4.0`.
    V4(v0_4_0::DefineHookPre<StoreData>),
    /// Built against `hookrt:hook/define-hook@0.3.0`.
    V3(v0_3_0::DefineHookPre<StoreData>),
    /// Built against `hookrt:hook/define-hook@0.2.0`.
    V2(v0_2_0::DefineHookPre<StoreData>),
    /// Built against `hookrt:hook/define-hook@0.1.0`.
    V1(v0_1_0::DefineHookPre<StoreData>),
}

impl Prepared {
    /// The world version.
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Prepared::V4(_) => "0.4.0",
            Prepared::V3(_) => "0.3.0",
            Prepared::V2(_) => "0.2.0",
            Prepared::V1(_) => "0.1.0",
        }
    }
}

/// Arms fuel and the wall-clock deadline for the next call into `store`.
pub(crate) fn begin_delivery(store: &mut Store<StoreData>, limits: &Limits) {
    begin_delivery_at(store, limits, Instant::now());
}

/// [`begin_delivery`] with the deadline counted from `now`.
pub(crate) fn begin_delivery_at(store: &mut Store<StoreData>, limits: &Limits, now: Instant) {
    if limits.metering == Metering::Fuel {
        // set_fuel only fails when fuel is not enabled, which the fuel engine guarantees.
        let _ = store.set_fuel(limits.fuel);
    }
    let state = store.data_mut();
    let deadline = now + limits.deadline();
    // The ticker ticks until then, whatever it did before.
    state.ticks.cover(deadline);
    state.arm(deadline);
    state.limiter.exceeded = false;
    store.set_epoch_deadline(1);
}

/// Fuel consumed since [`begin_delivery`] (0 under [`Metering::Epoch`]: not counted).
pub(crate) fn fuel_used(store: &Store<StoreData>, limits: &Limits) -> u64 {
    match limits.metering {
        Metering::Fuel => limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0)),
        Metering::Epoch => 0,
    }
}
