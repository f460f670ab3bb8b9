//! `hookrt claude-hook DIR`: hookrt as a Claude Code command hook. Claude
//! Code runs it per event with the event's JSON on stdin
//! (`.claude/settings.json`: `{"type": "command", "command": "hookrt claude-hook DIR"}`);
//! it runs the sandboxed hooks of DIR on the event and answers as Claude Code
//! documents: for `PreToolUse`, exit 0 and `hookSpecificOutput` with
//! `permissionDecision` `deny` / `ask` / `allow` and the reason (nothing when
//! every hook abstains: Claude Code's own permission rules decide); for the
//! other events, exit 0 and nothing on stdout. Anything that keeps hookrt
//! from deciding a `PreToolUse` (bad input, an agent folder that does not
//! load) exits 2, which blocks the tool call, with the reason on stderr: it
//! fails closed. For other events such a failure exits 1 (a non-blocking
//! error, shown in Claude Code's verbose mode).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use hookrt::event::claude_envelope;
use hookrt::{Approval, BuildOptions, Dispatch, Resolution, Runtime, Transport};

/// Largest input read: tool inputs can carry whole files.
const MAX_INPUT_BYTES: u64 = 16 << 20;

#[derive(clap::Args)]
pub struct ClaudeArgs {
    /// The agent folder whose hooks run (build it first: `hookrt build DIR`).
    pub dir: PathBuf,
    /// The agent name hooks see (`coordinates.agent`).
    #[arg(long, default_value = "claude-code")]
    pub agent: String,
}

pub fn claude_hook(args: &ClaudeArgs, opts: BuildOptions) -> ExitCode {
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_string(&mut input);
    // Cheap and safe: a PreToolUse input names itself even if it is broken.
    let gate = input.contains("\"PreToolUse\"");
    if let Err(e) = read {
        return fail(gate, &format!("cannot read the hook input on stdin: {e}"));
    }
    let envelope = match claude_envelope(&args.agent, &input) {
        Ok(e) => e,
        Err(e) => return fail(gate, &e.to_string()),
    };
    let mut rt = match Runtime::load_blocking(&args.dir, &opts, &mut |_| {}) {
        Ok(rt) => rt,
        Err(p) => {
            return fail(
                gate,
                &format!("the hooks of {} did not load:\n{p}", args.dir.display()),
            );
        }
    };
    rt.set_transport(Transport {
        kind: "claude-code".into(),
        detail: None,
    });
    match rt.dispatch(&envelope) {
        Ok(dispatch) => answer(&dispatch),
        Err(e) => fail(gate, &format!("event refused: {e}")),
    }
}

/// What Claude Code reads back.
fn answer(dispatch: &Dispatch) -> ExitCode {
    for d in dispatch
        .deliveries
        .iter()
        .filter(|d| d.outcome.is_failure())
    {
        eprintln!(
            "hookrt: hook `{}` {} on {}: {}",
            d.hook,
            d.outcome,
            d.kind,
            d.error.as_deref().unwrap_or("")
        );
    }
    let Some(Resolution::ToolApproval(t)) = &dispatch.resolution else {
        return ExitCode::SUCCESS;
    };
    let Some(call) = t.calls.first() else {
        return ExitCode::SUCCESS;
    };
    let by = call.decided_by.as_deref().unwrap_or("?");
    let (decision, reason) = match &call.verdict {
        Approval::Abstain => return ExitCode::SUCCESS,
        Approval::Allow => ("allow", format!("allowed by hookrt hook `{by}`")),
        Approval::Ask(question) => ("ask", question.clone()),
        Approval::Deny(why) => ("deny", why.clone()),
    };
    let out = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    });
    println!("{out}");
    ExitCode::SUCCESS
}

/// Fails closed for a tool call (exit 2 blocks it), open for the rest.
fn fail(gate: bool, why: &str) -> ExitCode {
    eprintln!("hookrt claude-hook: {why}");
    if gate {
        eprintln!(
            "hookrt claude-hook: the tool call is blocked because hookrt could not decide on it"
        );
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}
