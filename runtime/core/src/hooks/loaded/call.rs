//! Calling: one delivery's entry into a loaded hook, under its limits. A
//! fresh store and instance per call, or the warm one under `reuse`; a call
//! that failed never leaves its instance to be used again. Also the per-minute
//! log cap, which spans calls.

use std::sync::Arc;

use std::time::Instant;
use wasmtime::Store;

use crate::event::answer::Reply;
use crate::event::kind::{self, EventClass};
use crate::event::scope::{Scope, Transport};
use crate::event::transcript::Transcript;
use crate::hooks::folder::discovery::SourceKind;
use crate::hooks::folder::settings::InstancePolicy;
use crate::hooks::loaded::load::{Bindings, Failed, LoadedHook, Warm};
use crate::sandbox::capture::{LogLine, Output, RUNTIME_PREFIX};
use crate::sandbox::engine::{self, Sandbox};
use crate::sandbox::failure;
use crate::sandbox::grant::held::Arming;
use crate::sandbox::host::StoreData;
use crate::sandbox::limits::MAX_LOG_LINES_PER_MINUTE;
use crate::sandbox::metrics::Metrics;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::redaction::Redactor;
use crate::sandbox::state::StateStore;
use crate::sandbox::wit::{
    WitContext, WitEnvelope, WitEventClass, WitScope, WitTransport, v0_1_0, v0_2_0, v0_3_0,
};

/// The record of one call into a hook: one instance entered, one handler run.
pub struct Call {
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
    /// What the handler answered ([`Reply::NONE`] unless the outcome is `ok`).
    pub reply: Reply,
}

impl LoadedHook {
    /// Runs `handler` for one envelope under this hook's limits, with the
    /// transcript its agent's bridge named beside it. Never panics and never
    /// lets a failed instance be used again.
    pub fn call(
        &self,
        services: &Services<'_>,
        envelope: WitEnvelope<'_>,
        transcript: Option<&Arc<Transcript>>,
        handler: &str,
        class: EventClass,
    ) -> Call {
        let sandbox = services.sandbox;
        let limits = &self.settings.limits;
        let start = Instant::now();
        let reuse = self.settings.instance == InstancePolicy::Reuse;
        let (mut store, bindings, uses, warmed) = match self.instance(services, reuse, start) {
            Ok(ready) => ready,
            Err(failed) => return *failed,
        };
        self.arm_grants(store.data_mut(), services.state, transcript);
        // Instantiation already spent part of the budget; tell the hook what is
        // left (in replay mode the whole deadline, so every run reads the same;
        // a warm instance, armed just now, has it all).
        let budget_ms = if sandbox.pinned() || warmed {
            limits.deadline_ms
        } else {
            store
                .data()
                .deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as u64
        };
        let result = match &bindings {
            Bindings::V4(b) => {
                let cx = self.context(services, &envelope, handler, budget_ms, class);
                b.call_handle(&mut store, envelope, cx)
                    .map(|r| r.map(Reply::from))
            }
            Bindings::V3(b) => {
                let cx = self.context(services, &envelope, handler, budget_ms, class);
                let cx = v0_3_0::context_down(&cx);
                b.call_handle(&mut store, v0_3_0::envelope_down(&envelope), cx)
                    .map(|r| r.map(Reply::from))
            }
            Bindings::V2(b) => {
                let cx = self.context(services, &envelope, handler, budget_ms, class);
                let cx = v0_2_0::context_down(&cx, kind::answered_from_v3_as(envelope.kind, class));
                b.call_handle(&mut store, v0_2_0::envelope_down(&envelope), cx)
                    .map(|r| r.map(|a| Reply::from(v0_2_0::answer_up(a))))
            }
            Bindings::V1(b) => {
                let cx = v0_1_0::hookrt::hook::types::Context {
                    handler,
                    slug: self.slug.as_str(),
                    budget_ms,
                };
                b.call_handle(&mut store, v0_1_0::envelope_down(&envelope), cx)
                    .map(|r| r.map(|()| Reply::NONE))
            }
        };
        match result {
            Ok(returned) => {
                let (outcome, error, reply) = match returned {
                    Ok(reply) => (Outcome::Ok, None, reply),
                    Err(msg) => (
                        Outcome::Error,
                        Some(msg.chars().take(1000).collect()),
                        Reply::NONE,
                    ),
                };
                let r = Call {
                    outcome,
                    duration_us: start.elapsed().as_micros() as u64,
                    fuel_used: engine::fuel_used(&store, limits),
                    error,
                    output: store.data().capture.take(),
                    cancelled: false,
                    reply,
                };
                // A handler that returned (even an error) left its instance sound.
                if reuse {
                    *self.warm.lock().unwrap_or_else(|e| e.into_inner()) = Some(Warm {
                        store,
                        bindings,
                        uses: uses + 1,
                    });
                }
                r
            }
            Err(e) => self.failed(&store, start, &e),
        }
    }

    /// The instance this call runs in: the warm one under `reuse` (until it
    /// served its `reuse_limit`), else a fresh store and instance; with how
    /// often it was used and whether it was warm. A fresh one that did not
    /// start is the call's end.
    fn instance(
        &self,
        services: &Services<'_>,
        reuse: bool,
        start: Instant,
    ) -> Result<(Store<StoreData>, Bindings, u64, bool), Box<Call>> {
        let limits = &self.settings.limits;
        let warm = if reuse {
            self.warm.lock().unwrap_or_else(|e| e.into_inner()).take()
        } else {
            None
        };
        // A warm instance that served its `reuse_limit` is replaced.
        if let Some(w) = warm.filter(|w| w.uses < self.settings.reuse_limit) {
            let mut store = w.store;
            // Armed from `start`: one clock read fewer on the hot path.
            engine::begin_delivery_at(&mut store, limits, start);
            return Ok((store, w.bindings, w.uses, true));
        }
        let mut store = services.sandbox.new_store(
            limits,
            services.state.access(&self.id()),
            services.metrics.access(&self.id(), services.redactor),
            self.http_policy(services.redactor),
        );
        // Armed before instantiation too: what the hook's start may use.
        self.arm_grants(store.data_mut(), services.state, None);
        engine::begin_delivery(&mut store, limits);
        match self.instantiate(&mut store) {
            Ok(b) => Ok((store, b, 0, false)),
            Err(Failed::Wasm(e)) => Err(Box::new(self.failed(&store, start, &e))),
            Err(Failed::Refused(msg)) => Err(Box::new(Call {
                outcome: Outcome::Error,
                duration_us: start.elapsed().as_micros() as u64,
                fuel_used: engine::fuel_used(&store, limits),
                error: Some(format!("refused its configuration: {msg}")),
                output: store.data().capture.take(),
                cancelled: false,
                reply: Reply::NONE,
            })),
        }
    }

    /// Gives a store this delivery's grants, each as its grant arms it
    /// (`grant::held`): the transcript the event's bridge named, counts
    /// from zero (caps per delivery, also for a warm instance), ...
    fn arm_grants(
        &self,
        data: &mut StoreData,
        state: &Arc<StateStore>,
        transcript: Option<&Arc<Transcript>>,
    ) {
        let arming = Arming { state, transcript };
        for (_, held) in &self.held {
            held.arm(data, &arming);
        }
    }

    /// The context of one call: references into the hook, the envelope
    /// and the runtime (nothing copied).
    fn context<'a>(
        &'a self,
        services: &Services<'a>,
        envelope: &WitEnvelope<'a>,
        handler: &'a str,
        budget_ms: u64,
        class: EventClass,
    ) -> WitContext<'a> {
        WitContext {
            handler,
            slug: self.slug.as_str(),
            budget_ms,
            class: match class {
                EventClass::Observe => WitEventClass::Observe,
                EventClass::Decision => WitEventClass::Decision,
                EventClass::Edit => WitEventClass::Edit,
                EventClass::Gate => WitEventClass::Gate,
            },
            agent: envelope.coordinates.agent,
            session: envelope.coordinates.session,
            scope: match &self.scope {
                Scope::Primary => WitScope::Primary,
                Scope::Subagent(id) => WitScope::Subagent(id),
                Scope::Aggregate => WitScope::Aggregate,
            },
            transport: WitTransport {
                kind: &services.transport.kind,
                detail: services.transport.detail.as_deref(),
            },
        }
    }

    /// `text` with the generated crate of a single-file hook
    /// (`hooks/hook-<name>-<hash>/src/lib.rs`) replaced by the author's file.
    fn author_paths(&self, text: &str) -> String {
        if self.kind != SourceKind::SingleFile {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("hooks/hook-") {
            let tail = &rest[at..];
            match tail.find("/src/lib.rs") {
                Some(end) if !tail[..end].contains(char::is_whitespace) => {
                    out.push_str(&rest[..at]);
                    out.push_str(&self.source.display().to_string());
                    rest = &tail[end + "/src/lib.rs".len()..];
                }
                _ => {
                    out.push_str(&rest[..at + "hooks/hook-".len()]);
                    rest = &rest[at + "hooks/hook-".len()..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    fn failed(&self, store: &Store<StoreData>, start: Instant, e: &wasmtime::Error) -> Call {
        let outcome = failure::classify(e, store.data());
        let mut output = store.data().capture.take();
        output.stderr = self.author_paths(&output.stderr);
        let mut error = failure::describe(e);
        // A panicking Rust guest prints "panicked at <place>:" and its message first.
        let head: Vec<&str> = output
            .stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(2)
            .collect();
        let head = self.author_paths(&head.join(" "));
        if let Some(panic) = head.find("panicked at ").map(|at| &head[at..]) {
            // Lead with the author's panic and place, then what it did to the
            // instance, then the fix: the trap text alone says nothing useful.
            error = format!(
                "{}; the hook panicked, which traps its instance ({error}). \
                 fix: return Err(HookError::new(..)) instead of panicking, or fix the code at that line",
                panic.chars().take(300).collect::<String>()
            );
        } else if !head.is_empty() {
            error.push_str(&format!(
                " (stderr: {})",
                head.chars().take(300).collect::<String>()
            ));
        }
        Call {
            outcome,
            duration_us: start.elapsed().as_micros() as u64,
            fuel_used: engine::fuel_used(store, &self.settings.limits),
            error: Some(error),
            output,
            cancelled: store.data().cancelled,
            reply: Reply::NONE,
        }
    }
}

/// What a call needs from the runtime besides the hook itself.
pub struct Services<'a> {
    /// The engine and linker.
    pub sandbox: &'a Sandbox,
    /// Where `state` lives.
    pub state: &'a Arc<StateStore>,
    /// Where `metrics` go.
    pub metrics: &'a Arc<Metrics>,
    /// How events reach hookrt, as hooks are told.
    pub transport: &'a Transport,
    /// Secrets masked in what hooks write.
    pub redactor: &'a Redactor,
}

impl LoadedHook {
    /// Applies the per-minute log caps to what a delivery wrote: output past
    /// the hook's byte budget (`log_bytes_per_minute`) or line budget
    /// ([`MAX_LOG_LINES_PER_MINUTE`]) for this minute is dropped, each with its
    /// own marker. Only the runtime's markers are free: capture escapes any
    /// hook line that starts with [`RUNTIME_PREFIX`], so one that starts
    /// with it here is the runtime's.
    pub(crate) fn cap_log_rate(&self, output: &mut Output) {
        if output.logs.is_empty() && output.stdout.is_empty() && output.stderr.is_empty() {
            return; // nothing to count or cut (most deliveries): no lock, no clock
        }
        let cap = self.settings.limits.log_bytes_per_minute;
        let mut window = self.log_window.lock().unwrap_or_else(|e| e.into_inner());
        if window.0.elapsed() >= std::time::Duration::from_secs(60) {
            *window = (Instant::now(), 0, 0);
        }
        let size = |l: &LogLine| {
            (l.message.len()
                + l.fields
                    .iter()
                    .map(|(k, v)| k.len() + v.len())
                    .sum::<usize>()) as u64
        };
        let mut kept = Vec::new();
        let (mut bytes_cut, mut lines_cut) = (false, false);
        for line in output.logs.drain(..) {
            if line.message.starts_with(RUNTIME_PREFIX) {
                kept.push(line);
                continue;
            }
            let n = size(&line);
            if window.2 >= MAX_LOG_LINES_PER_MINUTE {
                lines_cut = true;
            } else if window.1 + n > cap {
                bytes_cut = true;
            } else {
                window.1 += n;
                window.2 += 1;
                kept.push(line);
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
                bytes_cut = true;
            }
            window.1 += text.len() as u64;
        }
        let mut marker = |text: String| {
            output.truncated = true;
            kept.push(LogLine {
                level: "warn",
                message: format!("{RUNTIME_PREFIX} {text}"),
                fields: Vec::new(),
            });
        };
        if lines_cut {
            marker(format!(
                "log lines cut at the hook's {MAX_LOG_LINES_PER_MINUTE}-line per-minute limit"
            ));
        }
        if bytes_cut {
            marker(format!(
                "output cut at the hook's {cap}-byte log_bytes_per_minute limit"
            ));
        }
        output.logs = kept;
    }
}
