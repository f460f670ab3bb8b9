//! Host state: what a hook's store holds, and the imports the host provides.
//!
//! Each store gets a WASI context with nothing granted (no preopened
//! directories, no environment, no arguments, no stdin, no sockets, no name
//! lookup), console streams captured into the output budget, the host `log`
//! import, and a resource limiter that records which limit a hook hit so the
//! delivery's outcome can name it.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::sandbox::bounded::{Bounded, HasBounded};
use crate::sandbox::capture::{Capture, Stream};
use crate::sandbox::http::HttpPolicy;
use crate::sandbox::limits::Limits;
use crate::sandbox::metrics::MetricsAccess;
use crate::sandbox::state::StateAccess;
use crate::sandbox::ticker::TickWindow;

/// What the pinned wall clock reads: 2026-01-01T00:00:00Z.
pub(crate) const PINNED_WALL_CLOCK_SECS: u64 = 1_767_225_600;

/// The clocks of replay mode: a wall clock stopped at
/// [`PINNED_WALL_CLOCK_SECS`] and a monotonic clock stopped at 0.
struct PinnedClock;

impl wasmtime_wasi::HostWallClock for PinnedClock {
    fn resolution(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(1)
    }
    fn now(&self) -> std::time::Duration {
        std::time::Duration::from_secs(PINNED_WALL_CLOCK_SECS)
    }
}

impl wasmtime_wasi::HostMonotonicClock for PinnedClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        0
    }
}

/// The data of one hook's store.
pub(crate) struct StoreData {
    wasi: WasiCtx,
    table: ResourceTable,
    /// Where log lines and console output go.
    pub capture: Capture,
    /// Memory, table and instance limits; records which one was hit.
    pub limiter: Limiter,
    /// When the running delivery must end.
    pub deadline: Instant,
    /// Set by the epoch callback when it interrupted the hook for the deadline.
    pub timed_out: bool,
    /// Set by the epoch callback when it interrupted the hook because the
    /// runtime is shutting down (the delivery is left unacked, not failed).
    pub cancelled: bool,
    cancel: Arc<AtomicBool>,
    /// The ticker's window, widened as each delivery is armed.
    pub(crate) ticks: Arc<TickWindow>,
    pub(crate) state: StateAccess,
    pub(crate) metrics: MetricsAccess,
    http_ctx: wasmtime_wasi_http::WasiHttpCtx,
    http: HttpPolicy,
    /// The hook's grants for the running delivery, each under its name
    /// (`grant::held`): what their host functions act with.
    pub(crate) grants: Armed,
    /// Replay mode ([`StoreData::pin`]): grants with an effect outside the
    /// run that a replay must not repeat (a notification) record it only.
    pub(crate) replay: bool,
}

impl StoreData {
    /// A fresh state for a store with `limits`; `cancel` interrupts it from
    /// outside, `ticks` is the sandbox's ticker's window; `state` is the
    /// hook's own key-value store.
    pub(crate) fn new(
        limits: &Limits,
        cancel: Arc<AtomicBool>,
        ticks: Arc<TickWindow>,
        state: StateAccess,
        metrics: MetricsAccess,
        http: HttpPolicy,
    ) -> Self {
        let capture = Capture::new(usize::try_from(limits.output_bytes).unwrap_or(usize::MAX));
        let wasi = WasiCtxBuilder::new()
            .stdout(capture.stream(Stream::Stdout))
            .stderr(capture.stream(Stream::Stderr))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        StoreData {
            wasi,
            table: ResourceTable::new(),
            capture,
            limiter: Limiter::new(limits),
            deadline: Instant::now(),
            timed_out: false,
            cancelled: false,
            cancel,
            ticks,
            state,
            metrics,
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            http,
            grants: Armed::default(),
            replay: false,
        }
    }

    /// Replaces the clocks and randomness with fixed ones (replay mode): the
    /// wall clock reads [`PINNED_WALL_CLOCK_SECS`], the monotonic clock 0,
    /// and both random interfaces the bytes 0, 1, ..., 255 over and over.
    pub(crate) fn pin(&mut self) {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut b = WasiCtxBuilder::new();
        b.stdout(self.capture.stream(Stream::Stdout))
            .stderr(self.capture.stream(Stream::Stderr))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .wall_clock(PinnedClock)
            .monotonic_clock(PinnedClock)
            .secure_random(wasmtime_wasi::Deterministic::new(bytes.clone()))
            .insecure_random(wasmtime_wasi::Deterministic::new(bytes))
            .insecure_random_seed(0);
        self.wasi = b.build();
        self.replay = true;
    }

    /// The resource table with what bounds a host call's waits.
    fn bounded(&mut self) -> Bounded<'_> {
        Bounded {
            table: &mut self.table,
            deadline: self.deadline,
            cancel: &self.cancel,
            timed_out: &mut self.timed_out,
            cancelled: &mut self.cancelled,
        }
    }

    /// Arms the deadline of the next delivery, for guest code (epochs), host
    /// waits and outbound HTTP alike: one budget.
    pub(crate) fn arm(&mut self, deadline: Instant) {
        self.deadline = deadline;
        self.http.deadline = deadline;
        self.timed_out = false;
        self.cancelled = false;
    }

    /// Called at each epoch tick: whether to interrupt the running delivery
    /// now, recording why.
    pub(crate) fn check_interrupt(&mut self) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            self.cancelled = true;
        } else if Instant::now() >= self.deadline {
            self.timed_out = true;
        }
        self.cancelled || self.timed_out
    }
}

impl WasiView for StoreData {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime_wasi_http::WasiHttpView for StoreData {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            hooks: &mut self.http,
            table: &mut self.table,
            ctx: &mut self.http_ctx,
        }
    }
}

/// Enforces the memory and table limits and remembers whether one was hit
/// during the current delivery. `memory_bytes` bounds each linear memory; a
/// Rust hook has exactly one.
pub(crate) struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    tables: usize,
    memories: usize,
    /// Whether a memory or table grow was refused.
    pub exceeded: bool,
}

impl Limiter {
    fn new(l: &Limits) -> Self {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Limiter {
            memory_bytes: size(l.memory_bytes),
            table_elements: size(l.table_elements),
            instances: size(l.instances),
            tables: size(l.tables),
            memories: size(l.memories),
            exceeded: false,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.memory_bytes;
        self.exceeded |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.table_elements;
        self.exceeded |= !ok;
        Ok(ok)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn tables(&self) -> usize {
        self.tables
    }

    fn memories(&self) -> usize {
        self.memories
    }
}

/// What the store's resource table is, for the `wasi:io` host functions.
struct HasTable;

impl wasmtime::component::HasData for HasTable {
    type Data<'a> = &'a mut ResourceTable;
}

/// Links the WASI interfaces a Rust hook needs just to exist, each given
/// nothing: `wasi:io` streams; `wasi:cli` stdout/stderr (captured), stdin
/// (empty), environment (no variables, no arguments), exit and terminal
/// queries; clocks; random.
pub(crate) fn link_wasi(
    linker: &mut wasmtime::component::Linker<StoreData>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView as _};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
    use wasmtime_wasi::p2::bindings::{cli, clocks, random, sync};
    use wasmtime_wasi::random::WasiRandom;
    let l = linker;
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<StoreData, HasTable>(l, |t| {
        &mut t.table
    })?;
    // Waits (poll, blocking stream calls) end at the delivery's deadline or at
    // shutdown: the guest is not running there, so epochs cannot stop it.
    sync::io::poll::add_to_linker::<StoreData, HasBounded>(l, StoreData::bounded)?;
    sync::io::streams::add_to_linker::<StoreData, HasBounded>(l, StoreData::bounded)?;
    clocks::wall_clock::add_to_linker::<StoreData, WasiClocks>(l, StoreData::clocks)?;
    clocks::monotonic_clock::add_to_linker::<StoreData, WasiClocks>(l, StoreData::clocks)?;
    random::random::add_to_linker::<StoreData, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure::add_to_linker::<StoreData, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure_seed::add_to_linker::<StoreData, WasiRandom>(l, |t| t.wasi.random())?;
    cli::exit::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::environment::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::stdin::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::stdout::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::stderr::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::terminal_input::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::terminal_output::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::terminal_stdin::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::terminal_stdout::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    cli::terminal_stderr::add_to_linker::<StoreData, WasiCli>(l, StoreData::cli)?;
    Ok(())
}

/// Links `wasi:filesystem` and `wasi:sockets`, inert: the store's WASI
/// context has no preopened directory (so no descriptor a path could be
/// opened from: every open fails) and allows no TCP, no UDP and no name
/// lookup (every socket fails `access-denied` before the host makes one).
/// Only a Python hook may import them (its interpreter does, whatever the
/// hook's code does): for every other hook an import of them is refused at
/// load (see `grants::Profile`), so a sandbox links them only when it runs a
/// Python hook.
pub(crate) fn link_wasi_inert(
    linker: &mut wasmtime::component::Linker<StoreData>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView as _};
    use wasmtime_wasi::p2::bindings::{filesystem, sockets, sync};
    use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView as _};
    let l = linker;
    filesystem::preopens::add_to_linker::<StoreData, WasiFilesystem>(l, StoreData::filesystem)?;
    sync::filesystem::types::add_to_linker::<StoreData, WasiFilesystem>(l, StoreData::filesystem)?;
    let network = sockets::network::LinkOptions::default();
    sockets::network::add_to_linker::<StoreData, WasiSockets>(l, &network, StoreData::sockets)?;
    sockets::instance_network::add_to_linker::<StoreData, WasiSockets>(l, StoreData::sockets)?;
    sockets::ip_name_lookup::add_to_linker::<StoreData, WasiSockets>(l, StoreData::sockets)?;
    sockets::tcp_create_socket::add_to_linker::<StoreData, WasiSockets>(l, StoreData::sockets)?;
    sync::sockets::tcp::add_to_linker::<StoreData, WasiSockets>(l, StoreData::sockets)?;
    sync::sockets::udp::add_to_linker::<StoreData, WasiSockets>(l, StoreData::sockets)?;
    sync::sockets::udp_create_socket::add_to_linker::<StoreData, WasiSockets>(
        l,
        StoreData::sockets,
    )?;
    Ok(())
}

/// The grants' state in a store, each under its grant's name.
#[derive(Default)]
pub(crate) struct Armed(Vec<(&'static str, Box<dyn Any + Send>)>);

impl Armed {
    /// Puts `value` under `grant`, replacing what was there.
    pub(crate) fn put<T: Any + Send>(&mut self, grant: &'static str, value: T) {
        match self.0.iter_mut().find(|(g, _)| *g == grant) {
            Some((_, slot)) => *slot = Box::new(value),
            None => self.0.push((grant, Box::new(value))),
        }
    }

    /// What `grant` holds, if it is armed with a `T`.
    pub(crate) fn get<T: Any>(&self, grant: &str) -> Option<&T> {
        self.0
            .iter()
            .find(|(g, _)| *g == grant)
            .and_then(|(_, v)| v.downcast_ref())
    }

    /// What `grant` holds, if it is armed with a `T`, to count in.
    pub(crate) fn get_mut<T: Any>(&mut self, grant: &str) -> Option<&mut T> {
        self.0
            .iter_mut()
            .find(|(g, _)| *g == grant)
            .and_then(|(_, v)| v.downcast_mut())
    }
}
