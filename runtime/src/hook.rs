//! Hooks: a built component loaded into the sandbox, with its subscriptions,
//! settings and (under the `reuse` policy) its warm instance.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use sha2::{Digest, Sha256};
use wasmtime::Store;

use crate::bindings::{DefineHook, DefineHookPre, WitContext, WitEnvelope};
use crate::build::BuiltHook;
use crate::capture::Output;
use crate::config::{HookSettings, InstancePolicy};
use crate::discovery::SourceKind;
use crate::host::HookState;
use crate::outcome::Outcome;
use crate::problem::Problem;
use crate::sandbox::{self, Sandbox};
use crate::slug::Slug;
use crate::vocabulary;
use crate::{WORLD, WORLD_VERSION, cache};

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
    /// True when cargo built its component during this load.
    pub cargo_built: bool,
    /// True when Cranelift compiled it during this load (no cached artifact).
    pub compiled: bool,
    /// What `hookrt.toml` sets for it.
    pub settings: HookSettings,
    /// Its subscriptions, as the hook reported them.
    pub subscriptions: Vec<String>,
    /// The interfaces the component imports.
    pub imports: Vec<String>,
    pre: DefineHookPre<HookState>,
    warm: Mutex<Option<Warm>>,
}

struct Warm {
    store: Store<HookState>,
    bindings: DefineHook,
}

/// What one call into a hook produced.
pub struct CallResult {
    /// How it ended.
    pub outcome: Outcome,
    /// Wall time of the call, including instantiation for fresh instances.
    pub duration_us: u64,
    /// Fuel the handler consumed.
    pub fuel_used: u64,
    /// The error or trap message for failures.
    pub error: Option<String>,
    /// What the hook wrote.
    pub output: Output,
    /// The runtime interrupted it to shut down: not an outcome of the hook,
    /// and the delivery must stay unacked.
    pub cancelled: bool,
}

impl LoadedHook {
    /// Loads a built hook: compile or fetch from the artifact cache, link,
    /// check the world, and ask for (and check) its subscriptions.
    pub fn load(sandbox: &Sandbox, built: &BuiltHook, settings: HookSettings, cache_dir: &std::path::Path) -> Result<LoadedHook, Problem> {
        let path = &built.hook.path;
        let bytes = std::fs::read(&built.component)
            .map_err(|e| Problem::new(&built.component, format!("cannot read component: {e}"), "run `hookrt build` again"))?;
        let component_sha256 = hex::encode(Sha256::digest(&bytes));
        let loaded = cache::load(sandbox.engine(), cache_dir, &component_sha256, &bytes).map_err(|e| {
            Problem::new(path, format!("is not a valid WebAssembly component: {e}"), "build it for wasm32-wasip2 as a component (cargo build --target wasm32-wasip2)")
        })?;
        let engine = sandbox.engine();
        let imports: Vec<String> = loaded.component.component_type().imports(engine).map(|(name, _)| name.to_owned()).collect();
        let pre = sandbox.prepare(&loaded.component).map_err(|e| {
            Problem::new(
                path,
                format!("does not implement the `{WORLD}@{WORLD_VERSION}` world: {}", one_line(&e)),
                "build it with hookrt-sdk's define_hook! macro, or export `subscriptions` and `handle` as in wit/hook.wit",
            )
        })?;
        let mut hook = LoadedHook {
            slug: built.hook.slug.clone(),
            kind: built.hook.kind,
            source: path.clone(),
            source_sha256: built.source_sha256.clone(),
            component_sha256,
            cargo_built: built.compiled,
            compiled: loaded.compiled,
            settings,
            subscriptions: Vec::new(),
            imports,
            pre,
            warm: Mutex::new(None),
        };
        hook.subscriptions = hook.ask_subscriptions(sandbox).map_err(|m| Problem::new(path, m, "fix what `subscriptions` returns"))?;
        Ok(hook)
    }

    fn ask_subscriptions(&self, sandbox: &Sandbox) -> Result<Vec<String>, String> {
        let limits = &self.settings.limits;
        let mut store = sandbox.new_store(limits);
        sandbox::begin_delivery(&mut store, limits);
        let subs = self
            .pre
            .instantiate(&mut store)
            .and_then(|b| b.call_subscriptions(&mut store))
            .map_err(|e| format!("failed while reporting its subscriptions ({}): {}", sandbox::classify(&e, store.data()), sandbox::describe(&e)))?;
        let mut problems = Vec::new();
        if subs.is_empty() {
            problems.push("subscribes to no event".to_owned());
        }
        for (i, s) in subs.iter().enumerate() {
            if subs[..i].contains(s) {
                problems.push(format!("subscribes to `{s}` twice"));
            } else if !vocabulary::is_subscribable(s) {
                problems.push(format!("subscribes to an {}", vocabulary::unknown_kind_message(s)));
            }
        }
        if problems.is_empty() { Ok(subs) } else { Err(problems.join("; ")) }
    }

    /// Runs `handler` for one envelope under this hook's limits. Never panics
    /// and never lets a failed instance be used again.
    pub fn call(&self, sandbox: &Sandbox, envelope: &WitEnvelope, handler: &str) -> CallResult {
        let limits = &self.settings.limits;
        let start = Instant::now();
        let reuse = self.settings.instance == InstancePolicy::Reuse;
        let warm = if reuse { self.warm.lock().unwrap_or_else(|e| e.into_inner()).take() } else { None };
        let mut store;
        let bindings;
        match warm {
            Some(w) => {
                store = w.store;
                bindings = w.bindings;
                sandbox::begin_delivery(&mut store, limits);
            }
            None => {
                store = sandbox.new_store(limits);
                sandbox::begin_delivery(&mut store, limits);
                match self.pre.instantiate(&mut store) {
                    Ok(b) => bindings = b,
                    Err(e) => return self.failed(&store, start, &e),
                }
            }
        }
        // Instantiation already spent part of the budget; tell the hook what is left.
        let budget_ms = store.data().deadline.saturating_duration_since(Instant::now()).as_millis() as u64;
        let cx = WitContext { handler: handler.to_owned(), slug: self.slug.to_string(), budget_ms };
        let result = bindings.call_handle(&mut store, envelope, &cx);
        match result {
            Ok(returned) => {
                let (outcome, error) = match returned {
                    Ok(()) => (Outcome::Ok, None),
                    Err(msg) => (Outcome::Error, Some(msg.chars().take(1000).collect())),
                };
                let r = CallResult {
                    outcome,
                    duration_us: start.elapsed().as_micros() as u64,
                    fuel_used: sandbox::fuel_used(&store, limits),
                    error,
                    output: store.data().capture.take(),
                    cancelled: false,
                };
                // A handler that returned (even an error) left its instance sound.
                if reuse {
                    *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Warm { store, bindings });
                }
                r
            }
            Err(e) => self.failed(&store, start, &e),
        }
    }

    fn failed(&self, store: &Store<HookState>, start: Instant, e: &wasmtime::Error) -> CallResult {
        let outcome = sandbox::classify(e, store.data());
        let output = store.data().capture.take();
        let mut error = sandbox::describe(e);
        // A panicking Rust guest prints "panicked at <place>:" and its message first.
        let head: Vec<&str> = output.stderr.lines().filter(|l| !l.trim().is_empty()).take(2).collect();
        if !head.is_empty() {
            error.push_str(&format!(" (stderr: {})", head.join(" ").chars().take(300).collect::<String>()));
        }
        CallResult {
            outcome,
            duration_us: start.elapsed().as_micros() as u64,
            fuel_used: sandbox::fuel_used(store, &self.settings.limits),
            error: Some(error),
            output,
            cancelled: store.data().cancelled,
        }
    }
}

fn one_line(e: &wasmtime::Error) -> String {
    format!("{e:#}").lines().next().unwrap_or("").to_owned()
}
