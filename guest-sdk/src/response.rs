//! What a handler answers: [`Response`], and [`IntoResponse`] for the types handlers return.
//!
//! A handler returns `Result<R, HookError>` for any `R: IntoResponse`:
//! - `()` (plain [`HookResult`](crate::HookResult)): nothing to say ([`Response::None`]).
//! - `Vec<Approval>`: one answer per requested call of `actions.requested`, in order.
//! - `Vec<CallAnswer>`: the same with an optional rewrite of each call's input, from a
//!   `rewrite:actions.requested` subscription ([`Response::Calls`]).
//! - [`FileEditAnswer`]: the answer to `file.edit.requested`.
//! - `Option<AgentInput>`: for `step.completed` / `turn.completed`, `Some(state)` edits
//!   the agent input state, `None` leaves it alone.
//! - [`Block`]: for the block gates (`prompt.submitted`, `compaction.requested`,
//!   `task.created`, `config.changed`): pass, or block with a reason.
//! - [`Continuation`]: for `turn.stopping`: let the turn stop, or keep it going.
//! - [`PermissionAnswer`]: for `permission.requested`: abstain, allow (with a rewritten
//!   input from a `rewrite:permission.requested` subscription), or deny.
//! - [`Gate`] or [`Response`] itself, when one handler answers in more than one way.
//!
//! Besides its answer, any handler may add text to the model's context with
//! [`context::add`](crate::context::add) (world 0.3.0's `reply.context`).
//!
//! The runtime checks every answer against the event: observe events ignore it, and an
//! answer that does not fit the event's class fails the delivery there. A rewrite is the
//! call's whole new input, a JSON object (at most 1 MiB): the SDK refuses anything else
//! before it reaches the host, and only `rewrite:` subscriptions may rewrite.

use serde_json::Value;

use crate::HookError;
use crate::events::AgentInput;

/// A hook's answer for one requested tool call (`actions.requested`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// No opinion: other hooks decide.
    Abstain,
    /// The call may run.
    Allow,
    /// A human must confirm; the text is the question to show.
    Ask(String),
    /// The call must not run; the text is the reason.
    Deny(String),
}

impl Approval {
    /// Ask a human to confirm the call, showing `question`.
    pub fn ask(question: impl Into<String>) -> Self {
        Self::Ask(question.into())
    }

    /// Refuse the call, giving `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny(reason.into())
    }
}

/// A hook's answer for one requested call with the call's input as the hook would have
/// it run (`rewrite:actions.requested`, world 0.3.0).
///
/// `rewrite` is the call's whole input after this hook's rewrite, a JSON object; `None`
/// keeps the input as this hook received it. Rewrites chain in registration order (each
/// later hook receives the input as rewritten so far), and a deny by any hook drops them
/// all.
#[derive(Debug, Clone, PartialEq)]
pub struct CallAnswer {
    /// Whether the call may run.
    pub approval: Approval,
    /// The call's whole new input (a JSON object), or `None` to keep it.
    pub rewrite: Option<Value>,
}

impl CallAnswer {
    /// `approval`, with the call's input kept as it is.
    pub fn keep(approval: Approval) -> Self {
        Self {
            approval,
            rewrite: None,
        }
    }

    /// `approval`, with the call's whole input replaced by `input` (a JSON object).
    pub fn rewrite(approval: Approval, input: Value) -> Self {
        Self {
            approval,
            rewrite: Some(input),
        }
    }
}

/// An approval keeps the call's input.
impl From<Approval> for CallAnswer {
    fn from(approval: Approval) -> Self {
        Self::keep(approval)
    }
}

/// The answer to a block gate: `prompt.submitted`, `compaction.requested`,
/// `task.created`, `config.changed` (world 0.3.0).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Block {
    /// No opinion: the agent goes on as it would.
    #[default]
    Pass,
    /// Stop what the event announces (the prompt is not sent, the compaction, task or
    /// config change does not happen); the text is the reason, shown to the user. The
    /// first block of all hooks decides.
    Block(String),
}

impl Block {
    /// Stop what the event announces, giving `reason`.
    #[allow(
        clippy::self_named_constructors,
        reason = "`Block::block(reason)` reads as the answer"
    )]
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block(reason.into())
    }
}

/// The answer to `turn.stopping` (world 0.3.0).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Continuation {
    /// The turn stops, as the agent wants.
    #[default]
    Stop,
    /// The turn goes on; the text is what the model is told to do next. Under the loop
    /// governor: at most `max_continues` in a row per session (`[governor]` in
    /// `hookrt.toml`), then the turn stops. The reasons of every continuing hook reach
    /// the model, in registration order.
    Continue(String),
}

impl Continuation {
    /// Keep the turn going, telling the model `reason` (what to do next).
    pub fn continue_turn(reason: impl Into<String>) -> Self {
        Self::Continue(reason.into())
    }
}

/// A gate answer of any gate kind (the WIT `gate` variant): what [`Block`] and
/// [`Continuation`] become. Return it (or [`Response::Gate`]) from a `define_hook!`
/// handler that serves several gate kinds; a gate answer the kind does not take
/// (`ContinueTurn` on `prompt.submitted`) is a malformed answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Gate {
    /// No opinion.
    #[default]
    Pass,
    /// Stop what the event announces: the reason (block gates).
    Block(String),
    /// Keep the turn going: what the model is told (`turn.stopping`).
    ContinueTurn(String),
}

impl From<Block> for Gate {
    fn from(answer: Block) -> Self {
        match answer {
            Block::Pass => Gate::Pass,
            Block::Block(reason) => Gate::Block(reason),
        }
    }
}

impl From<Continuation> for Gate {
    fn from(answer: Continuation) -> Self {
        match answer {
            Continuation::Stop => Gate::Pass,
            Continuation::Continue(reason) => Gate::ContinueTurn(reason),
        }
    }
}

/// A hook's answer to `permission.requested`: the agent is about to ask a human to
/// allow a call (world 0.3.0). Merged deny > allow > abstain; the first deny decides.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PermissionAnswer {
    /// No opinion: the human is asked.
    #[default]
    Abstain,
    /// Allowed without asking, with the call's input as it is.
    Allow,
    /// Allowed without asking, with the call's whole input replaced by this JSON object.
    /// Only from a `rewrite:permission.requested` subscription; rewrites chain as in
    /// [`CallAnswer`] and apply only when the merged answer is an allow.
    AllowRewritten(Value),
    /// Refused without asking.
    Deny {
        /// What the agent (and the model) is told.
        message: String,
        /// Whether the agent also stops the turn.
        interrupt: bool,
    },
}

impl PermissionAnswer {
    /// Refuse without asking, telling the agent `message`; the turn goes on.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::Deny {
            message: message.into(),
            interrupt: false,
        }
    }

    /// Refuse without asking, telling the agent `message`, and stop the turn.
    pub fn deny_and_interrupt(message: impl Into<String>) -> Self {
        Self::Deny {
            message: message.into(),
            interrupt: true,
        }
    }

    /// Allow without asking, with the call's whole input replaced by `input` (a JSON
    /// object).
    pub fn allow_rewritten(input: Value) -> Self {
        Self::AllowRewritten(input)
    }
}

/// A hook's answer to `file.edit.requested`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEditAnswer {
    /// This hook does not own the edit; the next hook (or the agent's own write) goes on.
    NotHandled,
    /// This hook applied and saved the edit; the agent must not write again.
    Applied,
    /// This hook owns the edit and it failed: the agent aborts its own write and reports
    /// the message. Never turn a failure into `NotHandled`: that lets the agent overwrite
    /// the work the failure protects.
    Failed(String),
}

impl FileEditAnswer {
    /// Own the edit and refuse it with `message`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

/// Everything a handler can answer (the WIT `response` variant).
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// Nothing to say: abstain, not handled, no edit or pass, depending on the event.
    None,
    /// One approval per requested call of `actions.requested`, in the event's order.
    Approvals(Vec<Approval>),
    /// The answer to `file.edit.requested`.
    FileEdit(FileEditAnswer),
    /// The whole agent input state after this hook's edit (`step.completed`, `turn.completed`).
    Edit(AgentInput),
    /// One answer per requested call of `actions.requested`, in the event's order, each
    /// with an optional rewrite (rewrites only from `rewrite:actions.requested`).
    Calls(Vec<CallAnswer>),
    /// The answer to a gate event.
    Gate(Gate),
    /// The answer to `permission.requested`.
    Permission(PermissionAnswer),
}

/// A value a handler may return inside `Ok(..)`.
pub trait IntoResponse {
    /// The response this value stands for.
    fn into_response(self) -> Response;
}

impl IntoResponse for () {
    fn into_response(self) -> Response {
        Response::None
    }
}

impl IntoResponse for Response {
    fn into_response(self) -> Response {
        self
    }
}

impl IntoResponse for Vec<Approval> {
    fn into_response(self) -> Response {
        Response::Approvals(self)
    }
}

impl IntoResponse for Vec<CallAnswer> {
    fn into_response(self) -> Response {
        Response::Calls(self)
    }
}

impl IntoResponse for FileEditAnswer {
    fn into_response(self) -> Response {
        Response::FileEdit(self)
    }
}

/// `Some(state)` is an edit; `None` leaves the state as it was.
impl IntoResponse for Option<AgentInput> {
    fn into_response(self) -> Response {
        match self {
            Some(state) => Response::Edit(state),
            None => Response::None,
        }
    }
}

impl IntoResponse for Gate {
    fn into_response(self) -> Response {
        Response::Gate(self)
    }
}

impl IntoResponse for Block {
    fn into_response(self) -> Response {
        Response::Gate(self.into())
    }
}

impl IntoResponse for Continuation {
    fn into_response(self) -> Response {
        Response::Gate(self.into())
    }
}

impl IntoResponse for PermissionAnswer {
    fn into_response(self) -> Response {
        Response::Permission(self)
    }
}

/// The JSON text of a rewrite, which must be an object.
fn rewrite_text(input: &Value, what: &str) -> Result<String, HookError> {
    if !input.is_object() {
        let kind = match input {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        return Err(HookError::new(format!(
            "{what} is {kind}, not a JSON object: a rewrite is the call's whole new input \
             (an object like the one in the event's data); keep the input with no rewrite instead"
        )));
    }
    serde_json::to_string(input)
        .map_err(|err| HookError::new(format!("{what} does not serialize: {err}")))
}

impl Response {
    /// Whether this answer rewrites a call's input (only `rewrite:` subscriptions may).
    pub(crate) fn rewrites(&self) -> bool {
        match self {
            Response::Calls(calls) => calls.iter().any(|call| call.rewrite.is_some()),
            Response::Permission(PermissionAnswer::AllowRewritten(_)) => true,
            _ => false,
        }
    }

    #[doc(hidden)]
    pub fn into_wit(self) -> Result<crate::bindings::hookrt::hook::types::Response, HookError> {
        use crate::bindings::hookrt::hook::types as wit;
        let approval = |approval| match approval {
            Approval::Abstain => wit::Approval::Abstain,
            Approval::Allow => wit::Approval::Allow,
            Approval::Ask(question) => wit::Approval::Ask(question),
            Approval::Deny(reason) => wit::Approval::Deny(reason),
        };
        Ok(match self {
            Response::None => wit::Response::None,
            Response::Approvals(approvals) => {
                wit::Response::Approvals(approvals.into_iter().map(approval).collect())
            }
            Response::FileEdit(answer) => wit::Response::FileEdit(match answer {
                FileEditAnswer::NotHandled => wit::FileEdit::NotHandled,
                FileEditAnswer::Applied => wit::FileEdit::Applied,
                FileEditAnswer::Failed(message) => wit::FileEdit::Failed(message),
            }),
            Response::Edit(state) => {
                wit::Response::Edit(serde_json::to_string(&state).map_err(|err| {
                    HookError::new(format!("edited agent state does not serialize: {err}"))
                })?)
            }
            Response::Calls(calls) => wit::Response::Calls(
                calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, call)| {
                        Ok(wit::CallAnswer {
                            approval: approval(call.approval),
                            rewrite: match &call.rewrite {
                                Some(input) => {
                                    Some(rewrite_text(input, &format!("the rewrite of call #{i}"))?)
                                }
                                None => None,
                            },
                        })
                    })
                    .collect::<Result<_, HookError>>()?,
            ),
            Response::Gate(gate) => wit::Response::Gate(match gate {
                Gate::Pass => wit::Gate::Pass,
                Gate::Block(reason) => wit::Gate::Block(reason),
                Gate::ContinueTurn(reason) => wit::Gate::ContinueTurn(reason),
            }),
            Response::Permission(answer) => wit::Response::Permission(match answer {
                PermissionAnswer::Abstain => wit::Permission::Abstain,
                PermissionAnswer::Allow => wit::Permission::Allow(None),
                PermissionAnswer::AllowRewritten(input) => wit::Permission::Allow(Some(
                    rewrite_text(&input, "the rewritten permission request's input")?,
                )),
                PermissionAnswer::Deny { message, interrupt } => {
                    wit::Permission::Deny(wit::Denial { message, interrupt })
                }
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::hookrt::hook::types as wit;

    #[test]
    fn unit_and_no_edit_mean_no_response() {
        assert_eq!(().into_response(), Response::None);
        assert_eq!(None::<AgentInput>.into_response(), Response::None);
    }

    #[test]
    fn approvals_keep_their_order_and_text() {
        let wit = vec![
            Approval::deny("no"),
            Approval::Abstain,
            Approval::ask("ok?"),
        ]
        .into_response()
        .into_wit()
        .expect("converts");
        let wit::Response::Approvals(list) = wit else {
            panic!("not approvals: {wit:?}")
        };
        assert!(matches!(&list[0], wit::Approval::Deny(r) if r == "no"));
        assert!(matches!(&list[1], wit::Approval::Abstain));
        assert!(matches!(&list[2], wit::Approval::Ask(q) if q == "ok?"));
    }

    #[test]
    fn calls_carry_their_approval_and_rewrite_as_json_text() {
        let wit = vec![
            CallAnswer::keep(Approval::Abstain),
            CallAnswer::rewrite(
                Approval::ask("ok?"),
                serde_json::json!({"command": "ls -la"}),
            ),
            Approval::deny("no").into(),
        ]
        .into_response()
        .into_wit()
        .expect("converts");
        let wit::Response::Calls(list) = wit else {
            panic!("not calls: {wit:?}")
        };
        assert!(matches!(
            &list[0],
            wit::CallAnswer {
                approval: wit::Approval::Abstain,
                rewrite: None
            }
        ));
        assert!(
            matches!(&list[1], wit::CallAnswer { approval: wit::Approval::Ask(q), rewrite: Some(r) }
            if q == "ok?" && r == r#"{"command":"ls -la"}"#)
        );
        assert!(
            matches!(&list[2], wit::CallAnswer { approval: wit::Approval::Deny(r), rewrite: None } if r == "no")
        );
    }

    #[test]
    fn a_rewrite_that_is_not_an_object_is_refused_with_what_it_is() {
        for (input, what) in [
            (serde_json::json!(null), "null"),
            (serde_json::json!("ls"), "a string"),
            (serde_json::json!([1]), "an array"),
            (serde_json::json!(3), "a number"),
        ] {
            let err = vec![CallAnswer::rewrite(Approval::Allow, input.clone())]
                .into_response()
                .into_wit()
                .expect_err("refused");
            assert!(
                err.message().starts_with(&format!(
                    "the rewrite of call #0 is {what}, not a JSON object"
                )),
                "{err}"
            );
            let err = PermissionAnswer::allow_rewritten(input)
                .into_response()
                .into_wit()
                .expect_err("refused");
            assert!(err.message().contains("not a JSON object"), "{err}");
        }
    }

    #[test]
    fn gates_map_to_the_wit_gate() {
        let gate = |answer: Response| match answer.into_wit().expect("converts") {
            wit::Response::Gate(gate) => gate,
            other => panic!("not a gate: {other:?}"),
        };
        assert!(matches!(gate(Block::Pass.into_response()), wit::Gate::Pass));
        assert!(
            matches!(gate(Block::block("no").into_response()), wit::Gate::Block(r) if r == "no")
        );
        assert!(matches!(
            gate(Continuation::Stop.into_response()),
            wit::Gate::Pass
        ));
        assert!(
            matches!(gate(Continuation::continue_turn("go on").into_response()),
            wit::Gate::ContinueTurn(r) if r == "go on")
        );
        assert!(matches!(
            gate(Gate::ContinueTurn("x".into()).into_response()),
            wit::Gate::ContinueTurn(_)
        ));
        assert_eq!(Block::default(), Block::Pass);
        assert_eq!(Continuation::default(), Continuation::Stop);
        assert_eq!(Gate::from(Block::block("b")), Gate::Block("b".into()));
    }

    #[test]
    fn permission_answers_map_to_the_wit_permission() {
        let permission =
            |answer: PermissionAnswer| match answer.into_response().into_wit().expect("converts") {
                wit::Response::Permission(p) => p,
                other => panic!("not a permission: {other:?}"),
            };
        assert!(matches!(
            permission(PermissionAnswer::Abstain),
            wit::Permission::Abstain
        ));
        assert!(matches!(
            permission(PermissionAnswer::Allow),
            wit::Permission::Allow(None)
        ));
        assert!(matches!(
            permission(PermissionAnswer::allow_rewritten(serde_json::json!({"path": "/tmp/x"}))),
            wit::Permission::Allow(Some(r)) if r == r#"{"path":"/tmp/x"}"#
        ));
        assert!(matches!(
            permission(PermissionAnswer::deny("not here")),
            wit::Permission::Deny(wit::Denial { message, interrupt: false }) if message == "not here"
        ));
        assert!(matches!(
            permission(PermissionAnswer::deny_and_interrupt("stop")),
            wit::Permission::Deny(wit::Denial { message, interrupt: true }) if message == "stop"
        ));
        assert_eq!(PermissionAnswer::default(), PermissionAnswer::Abstain);
    }

    #[test]
    fn only_rewrites_count_as_rewriting() {
        assert!(
            !vec![CallAnswer::keep(Approval::Allow)]
                .into_response()
                .rewrites()
        );
        assert!(
            vec![CallAnswer::rewrite(Approval::Allow, serde_json::json!({}))]
                .into_response()
                .rewrites()
        );
        assert!(!PermissionAnswer::Allow.into_response().rewrites());
        assert!(
            PermissionAnswer::allow_rewritten(serde_json::json!({}))
                .into_response()
                .rewrites()
        );
        assert!(!Block::block("b").into_response().rewrites());
    }

    #[test]
    fn an_edit_carries_the_whole_state_as_json() {
        let state: AgentInput = serde_json::from_str(
            r#"{"messages":[],"tool_calls":[],"tool_results":[],"extras":{"x":1},"progress":{"turn":1},"immutable_history":0}"#,
        )
        .expect("parses");
        let wit = Some(state.clone())
            .into_response()
            .into_wit()
            .expect("converts");
        let wit::Response::Edit(text) = wit else {
            panic!("not an edit: {wit:?}")
        };
        let back: AgentInput = serde_json::from_str(&text).expect("round trip");
        assert_eq!(back, state);
    }
}
