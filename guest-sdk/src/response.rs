//! What a handler answers: [`Response`], and [`IntoResponse`] for the types handlers return.
//!
//! A handler returns `Result<R, HookError>` for any `R: IntoResponse`:
//! - `()` (plain [`HookResult`](crate::HookResult)): nothing to say ([`Response::None`]).
//! - `Vec<Approval>`: one answer per requested call of `actions.requested`, in order.
//! - [`FileEditAnswer`]: the answer to `file.edit.requested`.
//! - `Option<AgentInput>`: for `step.completed` / `turn.completed`, `Some(state)` edits
//!   the agent input state, `None` leaves it alone.
//! - [`Response`] itself, when one handler answers in more than one way.
//!
//! The runtime checks every answer against the event: observe events ignore it, and an
//! answer that does not fit the event's class fails the delivery there.

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
    /// Nothing to say: abstain, not handled, or no edit, depending on the event.
    None,
    /// One approval per requested call of `actions.requested`, in the event's order.
    Approvals(Vec<Approval>),
    /// The answer to `file.edit.requested`.
    FileEdit(FileEditAnswer),
    /// The whole agent input state after this hook's edit (`step.completed`, `turn.completed`).
    Edit(AgentInput),
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

impl Response {
    #[doc(hidden)]
    pub fn into_wit(self) -> Result<crate::bindings::hookrt::hook::types::Response, HookError> {
        use crate::bindings::hookrt::hook::types as wit;
        Ok(match self {
            Response::None => wit::Response::None,
            Response::Approvals(approvals) => wit::Response::Approvals(
                approvals
                    .into_iter()
                    .map(|approval| match approval {
                        Approval::Abstain => wit::Approval::Abstain,
                        Approval::Allow => wit::Approval::Allow,
                        Approval::Ask(question) => wit::Approval::Ask(question),
                        Approval::Deny(reason) => wit::Approval::Deny(reason),
                    })
                    .collect(),
            ),
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
