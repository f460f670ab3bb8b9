//! The typed hook API: the [`Hook`] trait, one method per event kind, and the
//! `#[hookrt_sdk::hook]` attribute that exports an `impl Hook` block.
//!
//! The method an author implements decides everything the string-keyed
//! [`define_hook!`](crate::define_hook) left to the author: the subscription (derived
//! from the method's name, so a misspelled kind is a compile error: the method is not
//! a member of the trait), the typed data it receives (parsed before the call), and
//! what it may answer (the return type follows the event's class: observe -> `()`,
//! `actions.requested` -> `Vec<Approval>`, `file.edit.requested` -> [`FileEditAnswer`],
//! `step.completed` / `turn.completed` -> `Option<AgentInput>`, the block gates
//! `prompt.submitted`, `compaction.requested`, `task.created`, `config.changed` ->
//! [`Block`], `turn.stopping` -> [`Continuation`], `permission.requested` ->
//! [`PermissionAnswer`]). Returning an approval from an observe handler does not
//! compile. Any method may also add context for the model with
//! [`context::add`](crate::context::add).
//!
//! Every kind of the vocabulary has a method. The kinds only Eve's stream carries
//! (`session.waiting`, `reasoning.appended`, `task.started`, ...) receive Eve's data
//! ([`crate::eve`]); the kinds hookrt's own streams carry receive hookrt's data
//! ([`crate::events`]): on the Eve bridge, where those kinds carry Eve's shape, read
//! them in `any` with `event.data::<eve::MessageCompleted>()`. `custom.` kinds have no
//! method: handle them in `any` and match `event.kind()`.
//!
//! A decision, edit or gate event can also be watched without a vote: the `*_observed`
//! methods (`actions_requested_observed`, `turn_stopping_observed`, ...) subscribe as
//! `observe:<kind>`. The runtime delivers the event to them like to any handler, but
//! what they return and how they fail count for nothing in the resolution (a counter
//! that panics does not deny a tool call), and they do not appear among its votes.
//!
//! A rewrite of a call's input is declared: only the `*_rewrite` methods
//! (`actions_requested_rewrite`, `permission_requested_rewrite`) may rewrite, and they
//! subscribe as `rewrite:<kind>`, so the runtime knows which hooks rewrite before any
//! event runs. They vote like the plain method and return the input as they would have
//! it run ([`CallAnswer::rewrite`], [`PermissionAnswer::AllowRewritten`]); rewrites
//! chain in registration order, each later hook receiving the input as rewritten so far.
//!
//! ```ignore
//! #[derive(Default)]
//! pub struct ShellTimeout;
//!
//! #[hookrt_sdk::hook]
//! impl Hook for ShellTimeout {
//!     // Every shell call runs with a timeout: the hook rewrites the ones without.
//!     fn actions_requested_rewrite(&mut self, data: ActionsRequested, _e: &Event, _cx: &Context) -> HookResult<Vec<CallAnswer>> {
//!         Ok(data.actions.into_iter().map(|call| {
//!             if call.tool == "run_shell" && call.input.get("timeout_ms").is_none() {
//!                 let mut input = call.input;   // the whole input, as rewritten so far
//!                 input["timeout_ms"] = 60_000.into();
//!                 context::add("shell commands without a timeout run with 60 s");
//!                 CallAnswer::rewrite(Approval::Abstain, input)
//!             } else {
//!                 CallAnswer::keep(Approval::Abstain)
//!             }
//!         }).collect())
//!     }
//! }
//! ```
//!
//! Config is typed: `type Config` is any `Deserialize` type; the hook's `config`
//! table from `hookrt.toml` is parsed into it before `configure` runs, and a table that
//! does not fit refuses the hook at load with serde's message. Without `type Config`
//! the attribute uses [`NoConfig`] (any table accepted).

use serde::de::{Deserialize, DeserializeOwned, Deserializer, IgnoredAny};

use crate::events::*;
use crate::{
    Approval, Block, CallAnswer, Context, Continuation, Event, FileEditAnswer, HookError,
    HookResult, IntoResponse, PermissionAnswer, Response,
};

/// The config type of a hook that reads no config: any `config` table is accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoConfig;

impl<'de> Deserialize<'de> for NoConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| NoConfig)
    }
}

/// Declares the trait, its method table and its dispatch from one list, so the three
/// cannot drift: `method, "subscription", Data, Answer, |data| default answer`.
macro_rules! handlers {
    ($(
        $(#[doc = $doc:literal])*
        $method:ident, $key:literal, $data:ty, $answer:ty, |$d:ident| $default:expr;
    )+) => {
        /// A hook: implement the methods for the events it handles, then put
        /// `#[hookrt_sdk::hook]` on the `impl` block.
        ///
        /// ```ignore
        /// #[derive(Default)]
        /// pub struct Counter { calls: u64 }
        ///
        /// #[hookrt_sdk::hook]
        /// impl Hook for Counter {
        ///     fn actions_requested_observed(&mut self, data: ActionsRequested, _event: &Event, _cx: &Context) -> HookResult {
        ///         self.calls += data.actions.len() as u64;
        ///         metrics::counter("tool_calls", data.actions.len() as u64, &[]);
        ///         Ok(())
        ///     }
        /// }
        /// ```
        ///
        /// Every method has a default that does nothing (abstains, does not handle,
        /// does not edit, passes, lets the turn stop, keeps the input), but only the
        /// methods the `impl` block writes are subscribed:
        /// the default of a method the hook does not implement is never called by the
        /// runtime.
        pub trait Hook: Default + 'static {
            /// The hook's `config` table from `hookrt.toml`, parsed before `configure`.
            /// `#[hookrt_sdk::hook]` sets it to [`NoConfig`] when the block does not.
            type Config: DeserializeOwned;

            /// Called once per fresh component instance, before its first delivery, with
            /// the parsed config. An `Err` refuses the hook at load with its message.
            fn configure(&mut self, config: Self::Config) -> HookResult {
                let _ = config;
                Ok(())
            }

            /// `*`: every event of the hook's scope, after the specific handlers of
            /// every hook. An observer: its answer and its failure never decide.
            fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
                let _ = (event, cx);
                Ok(())
            }

            $(
                $(#[doc = $doc])*
                fn $method(&mut self, data: $data, event: &Event, cx: &Context) -> HookResult<$answer> {
                    let _ = (event, cx);
                    let $d = data;
                    let _ = &$d;
                    Ok($default)
                }
            )+
        }

        /// Every method of [`Hook`] that handles events, with the subscription it stands for.
        pub const METHODS: &[(&str, &str)] = &[("any", "*"), $((stringify!($method), $key)),+];

        /// Runs the method the delivery's handler key names; `None` for a key no method has.
        pub fn dispatch<H: Hook>(hook: &mut H, event: &Event, cx: &Context) -> Option<HookResult<Response>> {
            Some(match cx.handler() {
                "*" => hook.any(event, cx).map(IntoResponse::into_response),
                $($key => event
                    .data::<$data>()
                    .and_then(|data| hook.$method(data, event, cx))
                    .map(IntoResponse::into_response),)+
                _ => return None,
            })
        }
    };
}

handlers! {
    /// `session.started` (observe).
    session_started, "session.started", SessionStarted, (), |d| ();
    /// `session.completed` (observe).
    session_completed, "session.completed", SessionCompleted, (), |d| ();
    /// `session.failed` (observe).
    session_failed, "session.failed", SessionFailed, (), |d| ();
    /// `turn.started` (observe).
    turn_started, "turn.started", TurnStarted, (), |d| ();
    /// `turn.failed` (observe).
    turn_failed, "turn.failed", TurnFailed, (), |d| ();
    /// `step.started` (observe).
    step_started, "step.started", StepStarted, (), |d| ();
    /// `message.received` (observe).
    message_received, "message.received", MessageReceived, (), |d| ();
    /// `message.completed` (observe).
    message_completed, "message.completed", MessageCompleted, (), |d| ();
    /// `action.result` (observe).
    action_result, "action.result", ActionResult, (), |d| ();
    /// `input.requested` (observe).
    input_requested, "input.requested", InputRequested, (), |d| ();
    /// `input.received` (observe).
    input_received, "input.received", InputReceived, (), |d| ();
    /// `actions.requested` (decision): one approval per requested call, in order. A
    /// failure counts by the hook's `on_failure` (default `deny`: fails closed).
    actions_requested, "actions.requested", ActionsRequested, Vec<Approval>,
        |d| vec![Approval::Abstain; d.actions.len()];
    /// `file.edit.requested` (decision): own the write (`Applied`, `Failed`) or not.
    /// A failure counts by the hook's `on_failure` (default `deny`: the write is aborted).
    file_edit_requested, "file.edit.requested", FileEditRequested, FileEditAnswer,
        |d| FileEditAnswer::NotHandled;
    /// `prompt.submitted` (gate): a user prompt is submitted, before the model sees it;
    /// `Block::block(reason)` keeps it from the model (the reason is shown to the user).
    /// A failure counts by the hook's `on_failure` (default `deny`: the prompt is blocked).
    prompt_submitted, "prompt.submitted", PromptSubmitted, Block, |d| Block::Pass;
    /// `turn.stopping` (gate): the agent is about to end its turn;
    /// `Continuation::continue_turn(reason)` keeps it going, telling the model what to do
    /// next, at most `max_continues` times in a row (the loop governor). A failure never
    /// keeps a turn going.
    turn_stopping, "turn.stopping", TurnStopping, Continuation, |d| Continuation::Stop;
    /// `permission.requested` (decision): the agent is about to ask a human to allow a
    /// call; allow or deny it without asking, or abstain (the human is asked). Rewriting
    /// the input takes `permission_requested_rewrite`. A failure counts by the hook's
    /// `on_failure` (default `deny`).
    permission_requested, "permission.requested", PermissionRequested, PermissionAnswer,
        |d| PermissionAnswer::Abstain;
    /// `task.created` (gate): a task of the agent's is about to be created;
    /// `Block::block(reason)` stops it. A failure counts by the hook's `on_failure`.
    task_created, "task.created", TaskCreated, Block, |d| Block::Pass;
    /// `config.changed` (gate): the agent's settings changed and are about to apply;
    /// `Block::block(reason)` keeps them from applying. A failure counts by the hook's
    /// `on_failure`.
    config_changed, "config.changed", ConfigChanged, Block, |d| Block::Pass;
    /// `step.completed` (edit): `Some(input)` replaces the agent input state, `None` keeps it.
    step_completed, "step.completed", StepCompleted, Option<AgentInput>, |d| None;
    /// `turn.completed` (edit): `Some(input)` replaces the agent input state, `None` keeps it.
    turn_completed, "turn.completed", TurnCompleted, Option<AgentInput>, |d| None;
    /// `session.waiting` (observe, Eve's stream only): the session parks until the next user message.
    session_waiting, "session.waiting", crate::eve::SessionWaiting, (), |d| ();
    /// `turn.waiting` (observe, Eve's stream only): an open turn parks for input or tasks.
    turn_waiting, "turn.waiting", crate::eve::TurnWaiting, (), |d| ();
    /// `turn.cancelled` (observe, Eve's stream only): a turn is cancelled; not a failure.
    turn_cancelled, "turn.cancelled", crate::eve::TurnCancelled, (), |d| ();
    /// `step.failed` (observe, Eve's stream only): a model step fails.
    step_failed, "step.failed", crate::eve::StepFailed, (), |d| ();
    /// `reasoning.appended` (observe, Eve's stream only): a delta of the model's reasoning.
    reasoning_appended, "reasoning.appended", crate::eve::ReasoningAppended, (), |d| ();
    /// `reasoning.completed` (observe, Eve's stream only): a reasoning block is final.
    reasoning_completed, "reasoning.completed", crate::eve::ReasoningCompleted, (), |d| ();
    /// `message.appended` (observe, Eve's stream only): a delta of the assistant's text.
    message_appended, "message.appended", crate::eve::MessageAppended, (), |d| ();
    /// `result.completed` (observe, Eve's stream only): a structured result of an output-schema turn.
    result_completed, "result.completed", crate::eve::ResultCompleted, (), |d| ();
    /// `action.input.appended` (observe, Eve's stream only): a delta of a tool call's raw input text, before it is requested.
    action_input_appended, "action.input.appended", crate::eve::ActionInputAppended, (), |d| ();
    /// `action.partial` (observe, Eve's stream only): a preliminary result of a streaming tool.
    action_partial, "action.partial", crate::eve::ActionPartial, (), |d| ();
    /// `input.resolved` (observe, Eve's stream only): the server accepted answers to input requests (Eve; hookrt's own streams say input.received).
    input_resolved, "input.resolved", crate::eve::InputResolved, (), |d| ();
    /// `approval.candidate` (observe, Eve's stream only): one responder's approval candidate changed.
    approval_candidate, "approval.candidate", crate::eve::ApprovalCandidate, (), |d| ();
    /// `approval.settled` (observe, Eve's stream only): an approval request settled.
    approval_settled, "approval.settled", crate::eve::ApprovalSettled, (), |d| ();
    /// `task.started` (observe, Eve's stream only): an agent or workflow call started a task, maybe a child session.
    task_started, "task.started", crate::eve::TaskStarted, (), |d| ();
    /// `task.detached` (observe, Eve's stream only): a waited task moved to the background.
    task_detached, "task.detached", crate::eve::TaskDetached, (), |d| ();
    /// `task.settled` (observe, Eve's stream only): a task reached its first outcome.
    task_settled, "task.settled", crate::eve::TaskSettled, (), |d| ();
    /// `task.ended` (observe, Eve's stream only): a task ended after its last outcome.
    task_ended, "task.ended", crate::eve::TaskEnded, (), |d| ();
    /// `agent.started` (observe, Eve's stream only): a workflow opened a child agent session.
    agent_started, "agent.started", crate::eve::AgentStarted, (), |d| ();
    /// `compaction.requested` (gate, Eve's data): history compaction is about to start;
    /// `Block::block(reason)` stops it. A failure counts by the hook's `on_failure`
    /// (default `deny`: the compaction does not happen).
    compaction_requested, "compaction.requested", crate::eve::CompactionRequested, Block, |d| Block::Pass;
    /// `compaction.completed` (observe, Eve's stream only): a compaction checkpoint was written.
    compaction_completed, "compaction.completed", crate::eve::CompactionCompleted, (), |d| ();
    /// `context.cleared` (observe, Eve's stream only): the model-message history was cleared.
    context_cleared, "context.cleared", crate::eve::ContextCleared, (), |d| ();
    /// `authorization.required` (observe, Eve's stream only): a connection needs the user to sign in.
    authorization_required, "authorization.required", crate::eve::AuthorizationRequired, (), |d| ();
    /// `authorization.completed` (observe, Eve's stream only): a sign-in resolved.
    authorization_completed, "authorization.completed", crate::eve::AuthorizationCompleted, (), |d| ();
    /// `subagent.called` (observe, Eve's stream only): a parent started a subagent session (Eve's streams before version 25).
    subagent_called, "subagent.called", crate::eve::SubagentCalled, (), |d| ();
    /// `subagent.started` (observe, Eve's stream only): an inline subagent began (Eve's streams before version 25).
    subagent_started, "subagent.started", crate::eve::SubagentStarted, (), |d| ();
    /// `subagent.event` (observe, Eve's stream only): one event of a subagent, wrapped by its parent (Eve's streams before version 25).
    subagent_event, "subagent.event", crate::eve::SubagentEvent, (), |d| ();
    /// `subagent.completed` (observe, Eve's stream only): a subagent finished (Eve's streams before version 25).
    subagent_completed, "subagent.completed", crate::eve::SubagentCompleted, (), |d| ();
    /// `actions.requested` watched without a vote (`observe:actions.requested`): the
    /// hook's answer and failure count for nothing in the tool approval.
    actions_requested_observed, "observe:actions.requested", ActionsRequested, (), |d| ();
    /// `file.edit.requested` watched without owning or refusing the write.
    file_edit_requested_observed, "observe:file.edit.requested", FileEditRequested, (), |d| ();
    /// `step.completed` watched without editing (a failure rolls nothing back).
    step_completed_observed, "observe:step.completed", StepCompleted, (), |d| ();
    /// `turn.completed` watched without editing (a failure rolls nothing back).
    turn_completed_observed, "observe:turn.completed", TurnCompleted, (), |d| ();
    /// `prompt.submitted` watched without a say (a failure blocks nothing).
    prompt_submitted_observed, "observe:prompt.submitted", PromptSubmitted, (), |d| ();
    /// `turn.stopping` watched without a say (it never keeps a turn going).
    turn_stopping_observed, "observe:turn.stopping", TurnStopping, (), |d| ();
    /// `permission.requested` watched without allowing or denying.
    permission_requested_observed, "observe:permission.requested", PermissionRequested, (), |d| ();
    /// `task.created` watched without a say (a failure blocks nothing).
    task_created_observed, "observe:task.created", TaskCreated, (), |d| ();
    /// `config.changed` watched without a say (a failure blocks nothing).
    config_changed_observed, "observe:config.changed", ConfigChanged, (), |d| ();
    /// `compaction.requested` watched without a say (a failure blocks nothing).
    compaction_requested_observed, "observe:compaction.requested", crate::eve::CompactionRequested, (), |d| ();
    /// `actions.requested` with rewrites (`rewrite:actions.requested`): one answer per
    /// requested call, in order, each an approval and, optionally, the call's whole new
    /// input (a JSON object, [`CallAnswer::rewrite`]). Rewrites chain in registration
    /// order; a deny by any hook drops them all. The default keeps every call as it is
    /// and abstains. A failure counts by the hook's `on_failure` (default `deny`).
    actions_requested_rewrite, "rewrite:actions.requested", ActionsRequested, Vec<CallAnswer>,
        |d| vec![CallAnswer::keep(Approval::Abstain); d.actions.len()];
    /// `permission.requested` with a rewrite (`rewrite:permission.requested`):
    /// [`PermissionAnswer::AllowRewritten`] allows the call with its whole input replaced;
    /// the rewrite applies only when the merged answer is an allow.
    permission_requested_rewrite, "rewrite:permission.requested", PermissionRequested, PermissionAnswer,
        |d| PermissionAnswer::Abstain;
}

/// The subscription of the [`Hook`] method `method`; a compile error (when called in a
/// const) for a name that is not one.
pub const fn subscription(method: &str) -> &'static str {
    let mut i = 0;
    while i < METHODS.len() {
        if str_eq(METHODS[i].0, method) {
            return METHODS[i].1;
        }
        i += 1;
    }
    panic!("#[hookrt_sdk::hook]: a method is not an event handler of the `Hook` trait")
}

/// The subscriptions of the methods an `impl Hook` block wrote, in its order.
pub const fn subscriptions<const N: usize>(methods: [&str; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = subscription(methods[i]);
        i += 1;
    }
    out
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The `configure` step of a typed hook: the JSON config parsed as `H::Config`.
pub fn setup<H: Hook>(hook: &mut H, config: &serde_json::Value) -> HookResult {
    let typed = H::Config::deserialize(config).map_err(|err| {
        HookError::new(format!(
            "config does not fit `{}`: {err}; fix the hook's config table in hookrt.toml",
            short_type_name::<H::Config>()
        ))
    })?;
    hook.configure(typed)
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Exports an `impl Hook` block; written by `#[hookrt_sdk::hook]`, not by hand.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_hook {
    ($hook:ty; $($method:ident),+ $(,)?) => {
        const _: () = {
            const SUBSCRIPTIONS: &[&str] =
                &$crate::hook::subscriptions([$(::core::stringify!($method)),+]);
            const _: () = $crate::__private::check_subscriptions(SUBSCRIPTIONS);

            ::std::thread_local! {
                static INSTANCE: ::core::cell::RefCell<::core::option::Option<$hook>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }

            #[doc(hidden)]
            pub struct __HookrtAdapter;

            impl $crate::bindings::Guest for __HookrtAdapter {
                fn configure(
                    config: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    $crate::__private::configure(&INSTANCE, &config, $crate::hook::setup::<$hook>)
                }

                fn subscriptions() -> ::std::vec::Vec<::std::string::String> {
                    $crate::__private::subscriptions(SUBSCRIPTIONS)
                }

                fn handle(
                    envelope: $crate::bindings::hookrt::hook::types::Envelope,
                    context: $crate::bindings::hookrt::hook::types::Context,
                ) -> ::core::result::Result<
                    $crate::bindings::hookrt::hook::types::Reply,
                    ::std::string::String,
                > {
                    $crate::__private::run(
                        &INSTANCE,
                        SUBSCRIPTIONS,
                        envelope,
                        context,
                        $crate::hook::dispatch::<$hook>,
                    )
                }
            }

            $crate::bindings::export!(__HookrtAdapter with_types_in $crate::bindings);
        };
    };
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[serde(crate = "crate::serde")]
    struct Limit {
        max: usize,
    }

    #[derive(Default)]
    struct Guard {
        max: usize,
        seen: usize,
    }

    impl Hook for Guard {
        type Config = Limit;

        fn configure(&mut self, config: Limit) -> HookResult {
            self.max = config.max;
            Ok(())
        }

        fn actions_requested(
            &mut self,
            data: ActionsRequested,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult<Vec<Approval>> {
            Ok(data
                .actions
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    if i < self.max {
                        Approval::Allow
                    } else {
                        Approval::deny("too many")
                    }
                })
                .collect())
        }

        fn actions_requested_observed(
            &mut self,
            data: ActionsRequested,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult {
            self.seen += data.actions.len();
            Ok(())
        }
    }

    fn requested() -> Event {
        Event::from_json(
            r#"{"schema_version":1,"id":"evt_1","kind":"actions.requested","timestamp":"t",
                "coordinates":{"agent":"a","session":"s","sequence":0},
                "data":{"actions":[{"call_id":"c1","tool":"a"},{"call_id":"c2","tool":"b"}]}}"#,
        )
        .expect("envelope")
    }

    #[test]
    fn method_names_map_to_their_subscriptions() {
        assert_eq!(
            subscriptions(["message_completed", "actions_requested_observed", "any"]),
            ["message.completed", "observe:actions.requested", "*"]
        );
        // One method per kind of the vocabulary, and an observer per decision, edit or
        // gate kind.
        for kind in crate::events::KINDS {
            assert!(
                METHODS.iter().any(|(_, k)| k == kind),
                "{kind} has no method"
            );
        }
        for kind in [
            "actions.requested",
            "file.edit.requested",
            "step.completed",
            "turn.completed",
            "prompt.submitted",
            "turn.stopping",
            "permission.requested",
            "task.created",
            "config.changed",
            "compaction.requested",
        ] {
            let observed = format!("observe:{kind}");
            assert!(
                METHODS.iter().any(|(_, k)| *k == observed),
                "{observed} has no method"
            );
            assert_ne!(crate::EventClass::of_kind(kind), crate::EventClass::Observe);
        }
        // The rewriters, and nothing else under `rewrite:`.
        let rewriters: Vec<(&str, &str)> = METHODS
            .iter()
            .filter(|(_, k)| k.starts_with("rewrite:"))
            .copied()
            .collect();
        assert_eq!(
            rewriters,
            [
                ("actions_requested_rewrite", "rewrite:actions.requested"),
                (
                    "permission_requested_rewrite",
                    "rewrite:permission.requested"
                ),
            ]
        );
        // Every key is unique, and every method name follows its key.
        for (i, (method, key)) in METHODS.iter().enumerate() {
            assert!(
                METHODS[i + 1..].iter().all(|(_, k)| k != key),
                "{key} twice"
            );
            let expected = match key.split_once(':') {
                Some(("observe", kind)) => format!("{}_observed", kind.replace('.', "_")),
                Some(("rewrite", kind)) => format!("{}_rewrite", kind.replace('.', "_")),
                _ if *key == "*" => "any".to_owned(),
                _ => key.replace('.', "_"),
            };
            assert_eq!(*method, expected);
        }
    }

    #[test]
    fn every_method_is_reached_by_its_own_key() {
        let mut hook = Guard::default();
        for (method, key) in METHODS {
            let cx = Context::new(*key, "guard", 100);
            // The data does not fit most kinds: what matters is that a method ran.
            assert!(dispatch(&mut hook, &requested(), &cx).is_some(), "{method}");
        }
        let cx = Context::new("observe:message.completed", "guard", 100);
        assert!(dispatch(&mut hook, &requested(), &cx).is_none());
    }

    /// A hook that answers every new kind.
    #[derive(Default)]
    struct Answers;

    impl Hook for Answers {
        type Config = NoConfig;

        fn prompt_submitted(
            &mut self,
            data: PromptSubmitted,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult<Block> {
            crate::context::add("prompt seen");
            Ok(if data.prompt.contains("secret") {
                Block::block("no secrets in prompts")
            } else {
                Block::Pass
            })
        }

        fn turn_stopping(
            &mut self,
            data: TurnStopping,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult<Continuation> {
            Ok(if data.continued {
                Continuation::Stop
            } else {
                Continuation::continue_turn("run the tests first")
            })
        }

        fn permission_requested_rewrite(
            &mut self,
            mut data: PermissionRequested,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult<PermissionAnswer> {
            if data.tool == "rm" {
                return Ok(PermissionAnswer::deny_and_interrupt("never rm"));
            }
            data.input["sandboxed"] = true.into();
            Ok(PermissionAnswer::AllowRewritten(data.input))
        }

        fn actions_requested_rewrite(
            &mut self,
            data: ActionsRequested,
            _event: &Event,
            _cx: &Context,
        ) -> HookResult<Vec<CallAnswer>> {
            Ok(data
                .actions
                .into_iter()
                .map(|call| {
                    if call.tool == "a" {
                        CallAnswer::rewrite(Approval::Allow, serde_json::json!({"x": 1}))
                    } else {
                        Approval::deny("only a").into()
                    }
                })
                .collect())
        }
    }

    fn event(kind: &str, data: &str) -> Event {
        Event::from_json(&format!(
            r#"{{"schema_version":1,"id":"evt_9","kind":"{kind}","timestamp":"t",
                "coordinates":{{"agent":"a","session":"s","sequence":0}},"data":{data}}}"#
        ))
        .expect("envelope")
    }

    #[test]
    fn the_new_kinds_answer_their_typed_answers() {
        let mut hook = Answers;
        let run = |hook: &mut Answers, key: &str, kind: &str, data: &str| {
            dispatch(hook, &event(kind, data), &Context::new(key, "answers", 100))
                .expect("a method")
                .expect("answers")
        };
        crate::context::take();
        assert_eq!(
            run(
                &mut hook,
                "prompt.submitted",
                "prompt.submitted",
                r#"{"prompt":"a secret"}"#
            ),
            Response::Gate(crate::Gate::Block("no secrets in prompts".into()))
        );
        assert_eq!(crate::context::take().as_deref(), Some("prompt seen"));
        assert_eq!(
            run(&mut hook, "turn.stopping", "turn.stopping", "{}"),
            Response::Gate(crate::Gate::ContinueTurn("run the tests first".into()))
        );
        assert_eq!(
            run(
                &mut hook,
                "turn.stopping",
                "turn.stopping",
                r#"{"continued":true}"#
            ),
            Response::Gate(crate::Gate::Pass)
        );
        assert_eq!(
            run(
                &mut hook,
                "rewrite:permission.requested",
                "permission.requested",
                r#"{"tool":"sh","input":{"cmd":"ls"}}"#
            ),
            Response::Permission(PermissionAnswer::AllowRewritten(
                serde_json::json!({"cmd": "ls", "sandboxed": true})
            ))
        );
        assert_eq!(
            run(
                &mut hook,
                "rewrite:permission.requested",
                "permission.requested",
                r#"{"tool":"rm"}"#
            ),
            Response::Permission(PermissionAnswer::Deny {
                message: "never rm".into(),
                interrupt: true
            })
        );
        assert_eq!(
            run(
                &mut hook,
                "rewrite:actions.requested",
                "actions.requested",
                r#"{"actions":[{"call_id":"c1","tool":"a"},{"call_id":"c2","tool":"b"}]}"#
            ),
            Response::Calls(vec![
                CallAnswer::rewrite(Approval::Allow, serde_json::json!({"x": 1})),
                CallAnswer::keep(Approval::deny("only a")),
            ])
        );
    }

    #[test]
    fn the_defaults_of_the_new_methods_pass_stop_abstain_and_keep() {
        let mut hook = Guard::default();
        let run = |hook: &mut Guard, key: &str, kind: &str, data: &str| {
            dispatch(hook, &event(kind, data), &Context::new(key, "guard", 100))
                .expect("a method")
                .expect("answers")
        };
        for (kind, data) in [
            ("prompt.submitted", r#"{"prompt":"p"}"#),
            ("task.created", r#"{"task_id":"t","subject":"s"}"#),
            ("config.changed", r#"{"source":"user_settings"}"#),
            ("compaction.requested", "{}"),
            ("turn.stopping", "{}"),
        ] {
            assert_eq!(
                run(&mut hook, kind, kind, data),
                Response::Gate(crate::Gate::Pass),
                "{kind}"
            );
            let observed = format!("observe:{kind}");
            assert_eq!(run(&mut hook, &observed, kind, data), Response::None);
        }
        let permission = r#"{"tool":"t"}"#;
        for key in ["permission.requested", "rewrite:permission.requested"] {
            assert_eq!(
                run(&mut hook, key, "permission.requested", permission),
                Response::Permission(PermissionAnswer::Abstain)
            );
        }
        assert_eq!(
            run(
                &mut hook,
                "rewrite:actions.requested",
                "actions.requested",
                r#"{"actions":[{"call_id":"c1","tool":"a"},{"call_id":"c2","tool":"b"}]}"#
            ),
            Response::Calls(vec![CallAnswer::keep(Approval::Abstain); 2])
        );
    }

    #[test]
    fn typed_config_is_parsed_before_configure_and_a_misfit_names_the_type() {
        let mut hook = Guard::default();
        setup(&mut hook, &serde_json::json!({"max": 1})).expect("fits");
        assert_eq!(hook.max, 1);
        let err = setup(&mut hook, &serde_json::json!({"max": "one"})).expect_err("misfit");
        assert!(
            err.message()
                .starts_with("config does not fit `Limit`: invalid type: string \"one\""),
            "{err}"
        );
        let mut none = NoConfig;
        none = serde_json::from_value(serde_json::json!({"anything": [1, 2]})).unwrap_or(none);
        assert_eq!(none, NoConfig);
    }

    #[test]
    fn a_decision_method_answers_and_its_observer_only_watches() {
        let mut hook = Guard { max: 1, seen: 0 };
        let cx = Context::new("actions.requested", "guard", 100);
        assert_eq!(
            dispatch(&mut hook, &requested(), &cx),
            Some(Ok(Response::Approvals(vec![
                Approval::Allow,
                Approval::deny("too many")
            ])))
        );
        let cx = Context::new("observe:actions.requested", "guard", 100);
        assert_eq!(
            dispatch(&mut hook, &requested(), &cx),
            Some(Ok(Response::None))
        );
        assert_eq!(hook.seen, 2);
    }
}
