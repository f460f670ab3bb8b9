//! Hooks: a built component loaded into the sandbox, with its subscriptions,
//! settings and (under the `reuse` policy) its warm instance.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use wasmtime::Store;

use crate::bindings::{
    WitApproval, WitContext, WitEnvelope, WitEventClass, WitFileEdit, WitResponse, WitScope,
    WitTransport, envelope_v1, v1, v2,
};
use crate::build::BuiltHook;
use crate::capture::Output;
use crate::config::{HookSettings, InstancePolicy};
use crate::decision::{Approval, FileEdit};
use crate::discovery::SourceKind;
use crate::host::HookState;
use crate::http::HttpPolicy;
use crate::metrics::Metrics;
use crate::outcome::Outcome;
use crate::problem::Problem;
use crate::sandbox::{self, Prepared, Sandbox};
use crate::scope::{Scope, Transport};
use crate::slug::Slug;
use crate::state::StateStore;
use crate::vocabulary;
use crate::vocabulary::EventClass;
use crate::{WORLD, cache};

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
    /// Each import, what it needs and whether it is granted.
    pub import_audit: Vec<crate::grants::ImportAudit>,
    /// The world version it was built against.
    pub world_version: &'static str,
    /// Whose events it receives.
    pub scope: Scope,
    pre: Prepared,
    config_json: String,
    warm: Mutex<Option<Warm>>,
    /// Start of the current minute and the log bytes kept in it.
    log_window: Mutex<(Instant, u64)>,
}

enum Bindings {
    V2(v2::DefineHook),
    V1(v1::DefineHook),
}

struct Warm {
    store: Store<HookState>,
    bindings: Bindings,
    /// The last call's context, refilled in place (no allocation when warm).
    cx: Option<WitContext>,
    /// Deliveries it has served.
    uses: u64,
}

/// What a handler answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// Nothing (also every answer of a 0.1.0 hook).
    None,
    /// One approval per requested call.
    Approvals(Vec<Approval>),
    /// A file-edit answer.
    FileEdit(FileEdit),
    /// The whole edited agent input state, as JSON text.
    Edit(String),
}

impl From<WitResponse> for Response {
    fn from(r: WitResponse) -> Self {
        match r {
            WitResponse::None => Response::None,
            WitResponse::Approvals(list) => Response::Approvals(
                list.into_iter()
                    .map(|a| match a {
                        WitApproval::Abstain => Approval::Abstain,
                        WitApproval::Allow => Approval::Allow,
                        WitApproval::Ask(q) => Approval::Ask(q),
                        WitApproval::Deny(r) => Approval::Deny(r),
                    })
                    .collect(),
            ),
            WitResponse::FileEdit(f) => Response::FileEdit(match f {
                WitFileEdit::NotHandled => FileEdit::NotHandled,
                WitFileEdit::Applied => FileEdit::Applied,
                WitFileEdit::Failed(m) => FileEdit::Failed(m),
            }),
            WitResponse::Edit(json) => Response::Edit(json),
        }
    }
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
    /// What the handler answered (`None` unless the outcome is `ok`).
    pub response: Response,
}

impl LoadedHook {
    /// Loads a built hook: compile or fetch from the artifact cache, link,
    /// check the world, and ask for (and check) its subscriptions.
    /// `scratch` holds what hooks store while loading (configure, subscriptions):
    /// one throw-away store per load, never the runtime's.
    pub fn load(
        sandbox: &Sandbox,
        built: &BuiltHook,
        settings: HookSettings,
        cache_dir: &std::path::Path,
        scratch: &std::sync::Arc<StateStore>,
    ) -> Result<LoadedHook, Problem> {
        let path = &built.hook.path;
        let unreadable = |e: std::io::Error| {
            Problem::new(
                &built.component,
                format!("cannot read component: {e}"),
                "run `hookrt build` again",
            )
        };
        let component_sha256 = cache::component_digest(built).map_err(unreadable)?;
        let loaded = cache::load(
            sandbox.engine(),
            cache_dir,
            &component_sha256,
            &built.component,
        )
        .map_err(|e| match e {
            cache::CacheError::Invalid(e) => Problem::new(
                path,
                format!("is not a valid WebAssembly component: {e}"),
                "build it for wasm32-wasip2 as a component (cargo build --target wasm32-wasip2)",
            ),
            cache::CacheError::Io(e) => Problem::new(
                path,
                format!("cannot cache its compiled artifact: {e}"),
                "check disk space and permissions of the cache dir",
            ),
        })?;
        let engine = sandbox.engine();
        let imports: Vec<String> = loaded
            .component
            .component_type()
            .imports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let table = built.hook.scope.config_table(built.hook.slug.as_str());
        let import_audit = crate::grants::check(&imports, &settings.grants, &table)
            .map_err(|m| Problem::new(path, m, "grant what can be granted in hookrt.toml (`http` also needs `http_allow`), and remove the use of anything that cannot"))?;
        let pre = sandbox.prepare(&loaded.component).map_err(|e| {
            Problem::new(
                path,
                format!("does not implement the `{WORLD}` world (any of versions {}): {}", crate::bindings::SUPPORTED_VERSIONS.join(", "), one_line(&e)),
                "build it with hookrt-sdk's define_hook! macro, or export `configure`, `subscriptions` and `handle` as in wit/",
            )
        })?;
        let config_json = serde_json::Value::Object(settings.config.clone()).to_string();
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
            import_audit,
            world_version: pre.version(),
            scope: built.hook.scope.clone(),
            pre,
            config_json,
            warm: Mutex::new(None),
            log_window: Mutex::new((Instant::now(), 0)),
        };
        hook.subscriptions = hook.ask_subscriptions(sandbox, scratch).map_err(|m| {
            Problem::new(
                path,
                m,
                "fix the hook's configuration (hookrt.toml) or what `subscriptions` returns",
            )
        })?;
        Ok(hook)
    }

    /// A new instance in `store`, configured (0.2.0 hooks get their `config`).
    fn instantiate(&self, store: &mut Store<HookState>) -> Result<Bindings, Failed> {
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
        }
    }

    fn ask_subscriptions(
        &self,
        sandbox: &Sandbox,
        scratch: &std::sync::Arc<StateStore>,
    ) -> Result<Vec<String>, String> {
        let limits = &self.settings.limits;
        // Loading runs on a throw-away state: nothing a hook stores here persists.
        let mut store = sandbox.new_store(
            limits,
            scratch.access(&self.id()),
            Metrics::new().access(&self.id()),
            HttpPolicy::default(),
        );
        sandbox::begin_delivery(&mut store, limits);
        let subs = match self.instantiate(&mut store) {
            Ok(Bindings::V2(b)) => b.call_subscriptions(&mut store),
            Ok(Bindings::V1(b)) => b.call_subscriptions(&mut store),
            Err(Failed::Refused(msg)) => return Err(format!("refused its configuration: {msg}")),
            Err(Failed::Wasm(e)) => Err(e),
        }
        .map_err(|e| {
            format!(
                "failed while reporting its subscriptions ({}): {}",
                sandbox::classify(&e, store.data()),
                sandbox::describe(&e)
            )
        })?;
        let mut problems = Vec::new();
        if subs.is_empty() {
            problems.push("subscribes to no event".to_owned());
        }
        for (i, s) in subs.iter().enumerate() {
            if subs[..i].contains(s) {
                problems.push(format!("subscribes to `{s}` twice"));
            } else if !vocabulary::is_subscribable(s) {
                problems.push(format!(
                    "subscribes to an {}",
                    vocabulary::unknown_kind_message(s)
                ));
            }
        }
        if problems.is_empty() {
            Ok(subs)
        } else {
            Err(problems.join("; "))
        }
    }

    /// Runs `handler` for one envelope under this hook's limits. Never panics
    /// and never lets a failed instance be used again.
    pub fn call(
        &self,
        services: &Services<'_>,
        envelope: &WitEnvelope,
        handler: &str,
        class: EventClass,
    ) -> CallResult {
        let sandbox = services.sandbox;
        let limits = &self.settings.limits;
        let start = Instant::now();
        let reuse = self.settings.instance == InstancePolicy::Reuse;
        let warm = if reuse {
            self.warm.lock().unwrap_or_else(|e| e.into_inner()).take()
        } else {
            None
        };
        // A warm instance that served its `reuse_limit` is replaced.
        let warm = warm.filter(|w| w.uses < self.settings.reuse_limit);
        let (mut store, bindings, cx, uses) = match warm {
            Some(w) => {
                let mut store = w.store;
                sandbox::begin_delivery(&mut store, limits);
                (store, w.bindings, w.cx, w.uses)
            }
            None => {
                let mut store = sandbox.new_store(
                    limits,
                    services.state.access(&self.id()),
                    services.metrics.access(&self.id()),
                    self.http_policy(),
                );
                sandbox::begin_delivery(&mut store, limits);
                match self.instantiate(&mut store) {
                    Ok(b) => (store, b, None, 0),
                    Err(Failed::Wasm(e)) => return self.failed(&store, start, &e),
                    Err(Failed::Refused(msg)) => {
                        let output = store.data().capture.take();
                        let error = Some(format!("refused its configuration: {msg}"));
                        let duration_us = start.elapsed().as_micros() as u64;
                        let fuel_used = sandbox::fuel_used(&store, limits);
                        return CallResult {
                            outcome: Outcome::Error,
                            duration_us,
                            fuel_used,
                            error,
                            output,
                            cancelled: false,
                            response: Response::None,
                        };
                    }
                }
            }
        };
        // Instantiation already spent part of the budget; tell the hook what is left.
        let budget_ms = store
            .data()
            .deadline
            .saturating_duration_since(Instant::now())
            .as_millis() as u64;
        let mut cx = cx;
        let result = match &bindings {
            Bindings::V2(b) => {
                let cx = self.context(&mut cx, services, envelope, handler, budget_ms, class);
                b.call_handle(&mut store, envelope, cx)
                    .map(|r| r.map(Response::from))
            }
            Bindings::V1(b) => {
                let cx = v1::hookrt::hook::types::Context {
                    handler: handler.to_owned(),
                    slug: self.slug.to_string(),
                    budget_ms,
                };
                b.call_handle(&mut store, &envelope_v1(envelope), &cx)
                    .map(|r| r.map(|()| Response::None))
            }
        };
        match result {
            Ok(returned) => {
                let (outcome, error, response) = match returned {
                    Ok(response) => (Outcome::Ok, None, response),
                    Err(msg) => (
                        Outcome::Error,
                        Some(msg.chars().take(1000).collect()),
                        Response::None,
                    ),
                };
                let r = CallResult {
                    outcome,
                    duration_us: start.elapsed().as_micros() as u64,
                    fuel_used: sandbox::fuel_used(&store, limits),
                    error,
                    output: store.data().capture.take(),
                    cancelled: false,
                    response,
                };
                // A handler that returned (even an error) left its instance sound.
                if reuse {
                    *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Warm {
                        store,
                        bindings,
                        cx,
                        uses: uses + 1,
                    });
                }
                r
            }
            Err(e) => self.failed(&store, start, &e),
        }
    }

    /// The context of one call, refilled in `cached` (allocating only the
    /// first time, or when a text grows).
    fn context<'c>(
        &self,
        cached: &'c mut Option<WitContext>,
        services: &Services<'_>,
        envelope: &WitEnvelope,
        handler: &str,
        budget_ms: u64,
        class: EventClass,
    ) -> &'c WitContext {
        let cx = cached.get_or_insert_with(|| WitContext {
            handler: String::new(),
            slug: self.slug.to_string(),
            budget_ms: 0,
            class: WitEventClass::Observe,
            agent: String::new(),
            session: String::new(),
            scope: match &self.scope {
                Scope::Primary => WitScope::Primary,
                Scope::Subagent(id) => WitScope::Subagent(id.clone()),
                Scope::Aggregate => WitScope::Aggregate,
            },
            transport: WitTransport {
                kind: String::new(),
                detail: None,
            },
        });
        let set = |to: &mut String, from: &str| {
            if to != from {
                to.clear();
                to.push_str(from);
            }
        };
        set(&mut cx.handler, handler);
        set(&mut cx.agent, &envelope.coordinates.agent);
        set(&mut cx.session, &envelope.coordinates.session);
        set(&mut cx.transport.kind, &services.transport.kind);
        if cx.transport.detail != services.transport.detail {
            cx.transport.detail.clone_from(&services.transport.detail);
        }
        cx.budget_ms = budget_ms;
        cx.class = match class {
            EventClass::Observe => WitEventClass::Observe,
            EventClass::Decision => WitEventClass::Decision,
            EventClass::Edit => WitEventClass::Edit,
        };
        cx
    }

    fn failed(&self, store: &Store<HookState>, start: Instant, e: &wasmtime::Error) -> CallResult {
        let outcome = sandbox::classify(e, store.data());
        let output = store.data().capture.take();
        let mut error = sandbox::describe(e);
        // A panicking Rust guest prints "panicked at <place>:" and its message first.
        let head: Vec<&str> = output
            .stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(2)
            .collect();
        if !head.is_empty() {
            error.push_str(&format!(
                " (stderr: {})",
                head.join(" ").chars().take(300).collect::<String>()
            ));
        }
        CallResult {
            outcome,
            duration_us: start.elapsed().as_micros() as u64,
            fuel_used: sandbox::fuel_used(store, &self.settings.limits),
            error: Some(error),
            output,
            cancelled: store.data().cancelled,
            response: Response::None,
        }
    }
}

/// What a call needs from the runtime besides the hook itself.
pub struct Services<'a> {
    /// The engine and linker.
    pub sandbox: &'a Sandbox,
    /// Where `state` lives.
    pub state: &'a std::sync::Arc<StateStore>,
    /// Where `metrics` go.
    pub metrics: &'a std::sync::Arc<Metrics>,
    /// How events reach hookrt, as hooks are told.
    pub transport: &'a Transport,
    /// Secrets masked in what hooks write.
    pub redactor: &'a crate::redaction::Redactor,
}

/// Why an instance could not be made ready.
enum Failed {
    /// Instantiation or `configure` trapped or hit a limit.
    Wasm(wasmtime::Error),
    /// `configure` returned an error: the hook refused its configuration.
    Refused(String),
}

impl LoadedHook {
    /// Applies the per-minute log cap to what a delivery wrote: output past the
    /// hook's budget for this minute is dropped, with a marker.
    pub(crate) fn cap_log_rate(&self, output: &mut Output) {
        let cap = self.settings.limits.log_bytes_per_minute;
        let mut window = self.log_window.lock().unwrap_or_else(|e| e.into_inner());
        if window.0.elapsed() >= std::time::Duration::from_secs(60) {
            *window = (Instant::now(), 0);
        }
        let size = |l: &crate::capture::LogLine| {
            (l.message.len()
                + l.fields
                    .iter()
                    .map(|(k, v)| k.len() + v.len())
                    .sum::<usize>()) as u64
        };
        let mut kept = Vec::new();
        let mut cut = false;
        for line in output.logs.drain(..) {
            let n = if line.message.starts_with("[hookrt]") {
                0
            } else {
                size(&line)
            };
            if window.1 + n <= cap {
                window.1 += n;
                kept.push(line);
            } else {
                cut = true;
            }
        }
        for text in [&mut output.stdout, &mut output.stderr] {
            let left = cap.saturating_sub(window.1) as usize;
            if text.len() > left {
                let mut end = left;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                cut = true;
            }
            window.1 += text.len() as u64;
        }
        if cut {
            output.truncated = true;
            kept.push(crate::capture::LogLine {
                level: "warn",
                message: format!(
                    "[hookrt] output cut at the hook's {cap}-byte log_bytes_per_minute limit"
                ),
                fields: Vec::new(),
            });
        }
        output.logs = kept;
    }

    /// The outbound HTTP policy of its stores (nothing allowed without the grant).
    fn http_policy(&self) -> HttpPolicy {
        if !self.settings.grants.contains("http") {
            return HttpPolicy::default();
        }
        HttpPolicy {
            allow: self.settings.http_allow.clone(),
            timeout: self.settings.limits.deadline(),
        }
    }

    /// The hook's id across scopes (`audit`, `subagents/researcher/audit`).
    pub fn id(&self) -> String {
        self.scope.hook_id(self.slug.as_str())
    }

    /// Whether `id` is this hook's id, without building it (a hot-path lookup).
    pub fn has_id(&self, id: &str) -> bool {
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

fn one_line(e: &wasmtime::Error) -> String {
    format!("{e:#}").lines().next().unwrap_or("").to_owned()
}
