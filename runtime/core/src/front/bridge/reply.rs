//! What every agent's answer is made of, whatever its JSON: the words of a
//! tool call's verdict, the context hooks added, the loop governor's note,
//! a refusal's reason. One place, so every agent says the same thing for the
//! same resolution.

use serde_json::{Map, Value, json};

use crate::delivery::decision::CallDecision;
use crate::delivery::record::Resolution;
use crate::event::answer::{Approval, Gate};

/// What the user is told when the loop governor let a turn stop.
pub(crate) const CAPPED: &str = "hookrt's loop governor let this turn stop: its hooks kept it going max_continues times in a row ([governor] in hookrt.toml)";

/// What the user is told when hooks allowed a rewritten call the agent
/// cannot take rewritten: its own prompt decides.
pub(crate) const REWRITE_NOT_TAKEN: &str = "hookrt's hooks allowed this call only with a rewritten input, which this agent does not take on a permission request: it asks you instead";

/// The reason given with a rewrite that goes as an allow (an agent that
/// takes rewrites only so) when no hook decided the call.
pub(crate) const REWRITTEN: &str = "input rewritten by hookrt's hooks; no hook objected";

/// The reason of a deny that stands in for an `ask` where the agent cannot
/// ask from a hook: nothing runs without the human the hook wanted.
pub(crate) fn cannot_ask(question: &str) -> String {
    format!(
        "a hook wants a human to decide this ({question}), and this agent cannot ask from a hook: denied"
    )
}

/// The reason of a deny that stands in for an allow the hooks gave only
/// with a rewritten input, where the agent takes none (`why` says where:
/// "Cursor takes no rewrite on beforeShellExecution"): nothing runs other
/// than the hooks let run.
pub(crate) fn rewrite_refused(why: &str) -> String {
    format!("hookrt's hooks allowed this only rewritten, and {why}: denied")
}

/// A tool call's verdict in the words every agent reads (`allow`, `ask`,
/// `deny`) and its reason; `None` when every hook abstained.
pub fn tool_decision(call: &CallDecision) -> Option<(&'static str, String)> {
    let by = call.decided_by.as_deref().unwrap_or("?");
    match &call.verdict {
        Approval::Abstain => None,
        Approval::Allow => Some(("allow", format!("allowed by hookrt hook `{by}`"))),
        Approval::Ask(question) => Some(("ask", question.clone())),
        Approval::Deny(why) => Some(("deny", why.clone())),
    }
}

/// The context hooks added for the model, in registration order, within
/// the bound (a dropped piece is not sent); `None` when there is none.
pub(crate) fn context_text(resolution: &Resolution) -> Option<String> {
    let pieces: Vec<&str> = resolution
        .context()
        .iter()
        .filter(|c| !c.dropped)
        .map(|c| c.text.as_str())
        .collect();
    (!pieces.is_empty()).then(|| pieces.join("\n\n"))
}

/// The words of an agent that answers `{"decision", "reason"}` (OpenHands,
/// goose, Antigravity CLI): what it calls a deny, an ask, an allow and a
/// turn kept going, and why it takes no rewrite.
pub(crate) struct Decisions {
    /// A deny's word (`deny`, `block`).
    pub(crate) deny: &'static str,
    /// An ask's word where the agent asks; `None`: a deny naming the question.
    pub(crate) ask: Option<&'static str>,
    /// An allow's word.
    pub(crate) allow: &'static str,
    /// The word that blocks a prompt, or keeps a turn going at a stop.
    pub(crate) keep_going: &'static str,
    /// Why a rewritten call is denied (`"goose takes no rewritten input"`).
    pub(crate) no_rewrite: &'static str,
}

/// `{"decision", "reason"}` in `words` for `resolution`; `None` when there
/// is nothing to say. A rewrite is a deny: nothing runs other than the
/// hooks let run.
pub(crate) fn decided(words: &Decisions, resolution: &Resolution) -> Option<Map<String, Value>> {
    let (decision, reason) = match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            match tool_decision(call) {
                Some(("deny", why)) => (words.deny, why),
                Some(("ask", question)) => match words.ask {
                    Some(ask) => (ask, question),
                    None => (words.deny, cannot_ask(&question)),
                },
                _ if call.input.is_some() => (words.deny, rewrite_refused(words.no_rewrite)),
                Some((_, why)) => (words.allow, why),
                None => return None,
            }
        }
        Resolution::Gate(g) => match &g.verdict {
            Gate::Block(reason) | Gate::Continue(reason) => (words.keep_going, reason.clone()),
            Gate::Pass => return None,
        },
        Resolution::Permission(_)
        | Resolution::FileEdit(_)
        | Resolution::Edit(_)
        | Resolution::Context(_) => return None,
    };
    let mut out = Map::new();
    out.insert("decision".into(), json!(decision));
    out.insert("reason".into(), json!(reason));
    Some(out)
}

/// The refusal of a gate hookrt could not decide (`reason` says why), in
/// `words`: their deny.
pub(crate) fn decision_refusal(words: &Decisions, reason: &str) -> Value {
    json!({"decision": words.deny, "reason": refused(reason)})
}

/// Whether hooks kept the turn going.
pub(crate) fn continued(resolution: &Resolution) -> bool {
    matches!(resolution, Resolution::Gate(g) if matches!(g.verdict, Gate::Continue(_)))
}

/// The reason given when hookrt refuses a gate it could not decide.
pub fn refused(reason: &str) -> String {
    format!("hookrt could not decide this, so it is refused: {reason}")
}

/// The gate of `gates` a raw input names, read without parsing it (so also
/// when it is broken): a failure on it must refuse.
pub(crate) fn gate_named(gates: &[&'static str], input: &str) -> Option<&'static str> {
    gates
        .iter()
        .copied()
        .find(|g| input.contains(&format!("\"{g}\"")))
}

/// Puts the hooks' context under `key` in `into` when the event takes it
/// (`takes`) and there is some.
pub(crate) fn add_context(
    into: &mut Map<String, Value>,
    key: &str,
    resolution: &Resolution,
    takes: bool,
) {
    if let Some(context) = context_text(resolution).filter(|_| takes) {
        into.insert(key.into(), json!(context));
    }
}

/// The answer `out`, with `specific` as its `hookSpecificOutput` (naming
/// event `name`) when that holds anything; `None` when there is nothing to
/// say.
pub(crate) fn finish(
    mut out: Map<String, Value>,
    mut specific: Map<String, Value>,
    name: &str,
) -> Option<Value> {
    if !specific.is_empty() {
        specific.insert("hookEventName".into(), json!(name));
        out.insert("hookSpecificOutput".into(), Value::Object(specific));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}
