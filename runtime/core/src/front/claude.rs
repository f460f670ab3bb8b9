//! The Claude Code bridge, answer side: the JSON Claude Code reads back
//! after an event, the same over both transports (`hookrt claude-hook`'s
//! stdout, `hookrt serve`'s `/v1/claude-code` body).
//!
//! - a gate (`PreToolUse`, `PreSkillShellCommand`): `hookSpecificOutput`
//!   with `permissionDecision` `deny` / `ask` / `allow` and its reason;
//!   nothing when every hook abstains (Claude Code's own rules decide);
//! - every other event: nothing.
//!
//! A gate hookrt cannot decide is refused ([`claude_refusal`]): Claude Code
//! lets a call run when its hook fails any other way.

use serde_json::{Value, json};

use crate::delivery::record::Resolution;
use crate::event::answer::Approval;

/// The Claude Code events that gate a call.
pub const CLAUDE_GATES: [&str; 2] = ["PreToolUse", "PreSkillShellCommand"];

/// Whether Claude Code event `name` gates a call: hookrt failing on it must
/// block the call.
pub fn is_claude_gate(name: &str) -> bool {
    CLAUDE_GATES.contains(&name)
}

/// The gate a raw input names, read without parsing it (so also when it is
/// broken): a failure on it must block the call.
pub fn gate_named(input: &str) -> Option<&'static str> {
    CLAUDE_GATES
        .into_iter()
        .find(|g| input.contains(&format!("\"{g}\"")))
}

/// What Claude Code reads back after event `name`, whose hooks decided
/// `resolution`: `None` when there is nothing to say.
pub fn claude_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let Some(Resolution::ToolApproval(t)) = resolution else {
        return None;
    };
    let call = t.calls.first()?;
    let by = call.decided_by.as_deref().unwrap_or("?");
    let (decision, reason) = match &call.verdict {
        Approval::Abstain => return None,
        Approval::Allow => ("allow", format!("allowed by hookrt hook `{by}`")),
        Approval::Ask(question) => ("ask", question.clone()),
        Approval::Deny(why) => ("deny", why.clone()),
    };
    Some(permission(name, decision, &reason))
}

/// The answer that blocks gate `name` because hookrt could not decide it
/// (`reason` says why): a deny.
pub fn claude_refusal(name: &str, reason: &str) -> Value {
    permission(
        name,
        "deny",
        &format!("hookrt could not decide this call, so it is blocked: {reason}"),
    )
}

fn permission(name: &str, decision: &str, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": name,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}
