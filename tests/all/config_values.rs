//! Bad values of every hookrt.toml key: each refused with a message naming
//! the table, the key and what is allowed (checked before anything runs).

use std::path::Path;

use hookrt::hooks::Config;

fn problems(text: &str) -> Vec<String> {
    match Config::parse(text, Path::new("hookrt.toml")) {
        Ok(_) => vec!["ACCEPTED".to_owned()],
        Err(p) => p.0.into_iter().map(|p| p.message).collect(),
    }
}

/// (hookrt.toml text, its problems joined by ` | `). A TOML type error is
/// several lines (the line, a caret); `...` checks its last line only.
const CASES: &[(&str, &str)] = &[
    ("[hooks.a]\nfuel = 0\n", "[hooks.\"a\"] fuel = 0"),
    (
        "[hooks.a]\nfuel = 20_000_000_000\n",
        "[hooks.\"a\"] fuel = 20000000000 is above the maximum 10000000000",
    ),
    (
        "[hooks.a]\ndeadline_ms = 0\n",
        "[hooks.\"a\"] deadline_ms = 0",
    ),
    (
        "[hooks.a]\ndeadline_ms = 600_001\n",
        "[hooks.\"a\"] deadline_ms = 600001 is above the maximum 600000",
    ),
    (
        "[hooks.a]\nmemory_mib = 0\n",
        "[hooks.\"a\"] memory_mib = 0",
    ),
    (
        "[hooks.a]\nmemory_mib = 4097\n",
        "[hooks.\"a\"] memory_mib = 4097 is above the maximum 4096",
    ),
    (
        "[hooks.a]\ntable_elements = 0\n",
        "[hooks.\"a\"] table_elements = 0",
    ),
    (
        "[hooks.a]\ntable_elements = 10_000_001\n",
        "[hooks.\"a\"] table_elements = 10000001 is above the maximum 10000000",
    ),
    ("[hooks.a]\ninstances = 0\n", "[hooks.\"a\"] instances = 0"),
    (
        "[hooks.a]\ninstances = 1001\n",
        "[hooks.\"a\"] instances = 1001 is above the maximum 1000",
    ),
    ("[hooks.a]\ntables = 0\n", "[hooks.\"a\"] tables = 0"),
    (
        "[hooks.a]\ntables = 1001\n",
        "[hooks.\"a\"] tables = 1001 is above the maximum 1000",
    ),
    ("[hooks.a]\nmemories = 0\n", "[hooks.\"a\"] memories = 0"),
    (
        "[hooks.a]\nmemories = 101\n",
        "[hooks.\"a\"] memories = 101 is above the maximum 100",
    ),
    (
        "[hooks.a]\noutput_bytes = 0\n",
        "[hooks.\"a\"] output_bytes = 0",
    ),
    (
        "[hooks.a]\noutput_bytes = 67108865\n",
        "[hooks.\"a\"] output_bytes = 67108865 is above the maximum 67108864",
    ),
    (
        "[hooks.a]\nlog_bytes_per_minute = 0\n",
        "[hooks.\"a\"] log_bytes_per_minute = 0",
    ),
    (
        "[hooks.a]\ninstance = \"sometimes\"\n",
        "...unknown variant `sometimes`, expected `fresh` or `reuse`",
    ),
    (
        "[hooks.a]\nreuse_limit = 0\n",
        "[hooks.\"a\"] reuse_limit = 0",
    ),
    (
        "[hooks.a]\ncritical = \"yes\"\n",
        "...invalid type: string \"yes\", expected a boolean",
    ),
    (
        "[hooks.a]\nmax_attempts = 0\n",
        "[hooks.\"a\"] max_attempts = 0",
    ),
    (
        "[hooks.a]\nmax_attempts = 1000\n",
        "[hooks.\"a\"] max_attempts = 1000 is above the maximum 20",
    ),
    (
        "[hooks.a]\nbackoff_ms = 60_001\n",
        "[hooks.\"a\"] backoff_ms = 60001 is above the maximum 60000",
    ),
    (
        "[hooks.a]\non_failure = \"allow\"\n",
        "...unknown variant `allow`, expected `deny` or `abstain`",
    ),
    (
        "[hooks.a]\ngrants = [\"log\", \"disk\"]\n",
        "[hooks.\"a\"] grants unknown capability `disk`",
    ),
    (
        "[hooks.a]\nhttp_allow = [\"ftp://x.example\"]\n",
        "[hooks.\"a\"] has `http_allow` without the `http` grant | [hooks.\"a\"] http_allow entry `ftp://x.example` names a scheme other than http or https",
    ),
    (
        "[hooks.a]\nfuel = -1\n",
        "...invalid value: integer `-1`, expected u64",
    ),
    (
        "[defaults]\nname = \"x\"\n",
        "[defaults] sets `name`, which belongs to one hook",
    ),
    (
        "[defaults]\nconfig = { a = 1 }\n",
        "[defaults] sets `config`, which belongs to one hook",
    ),
    (
        "mode = \"fast\"\n",
        "...unknown variant `fast`, expected `build` or `prebuilt`",
    ),
    ("order = [\"a\", \"a\"]\n", "`order` lists `a` twice"),
    (
        "[redaction.patterns]\nbad = \"(\"\n",
        "[redaction.patterns]: redaction pattern `bad` is not a valid regex: regex parse error:\n    (\n    ^\nerror: unclosed group",
    ),
    (
        "[defaults]\ndescription = \"d\"\n",
        "[defaults] sets `description`, which belongs to one hook",
    ),
];

#[test]
fn a_bad_value_of_every_key_is_refused_with_its_own_message() {
    for (text, expected) in CASES {
        let got = problems(text).join(" | ");
        match expected.strip_prefix("...") {
            Some(last) => assert!(got.ends_with(last), "{text}: {got}"),
            None => assert_eq!(&got, expected, "{text}"),
        }
    }
    assert_eq!(
        CASES.len(),
        33,
        "every key has its case (two for bounded ones)"
    );
}

/// A guard that panics on both its votes: a deny of tool calls and a reminder
/// on prompts (issue 53's newcomer's hook, with a bug in it).
const BROKEN_GUARD: &str = "use hookrt_sdk::prelude::*;\n#[derive(Default)]\npub struct Guard;\n\
    #[hookrt_sdk::hook]\nimpl Hook for Guard {\n    type Config = NoConfig;\n    \
    fn actions_requested(&mut self, _d: ActionsRequested, _e: &Event, _c: &Context) -> HookResult<Vec<Approval>> {\n        \
    panic!(\"guard bug\")\n    }\n    \
    fn prompt_submitted(&mut self, _d: PromptSubmitted, _e: &Event, _c: &Context) -> HookResult<Block> {\n        \
    context::add(\"Run the tests before you push.\");\n        panic!(\"reminder bug\")\n    }\n}\n";

fn event(kind: &str, data: serde_json::Value) -> hookrt::Envelope {
    hookrt::Envelope::new("e1", kind, hookrt::Coordinates::new("coder", "s1", 0), data).unwrap()
}

#[test]
fn on_failure_per_subscription_fails_the_gate_closed_and_the_reminder_open() {
    use hookrt::event::Gate;
    use hookrt::{Approval, Outcome, Resolution};
    let agent = crate::common::TempAgent::new()
        .file("hooks/guard.rs", BROKEN_GUARD)
        .config(
            "[hooks.guard]\non_failure = { \"actions.requested\" = \"deny\", \"prompt.submitted\" = \"abstain\" }\n",
        );
    let rt = crate::common::load(agent.path());
    let tool = event(
        "actions.requested",
        serde_json::json!({"actions": [{"call_id": "c1", "tool": "Bash", "input": {"command": "git push --force"}}]}),
    );
    let d = rt.dispatch(&tool).unwrap();
    assert_eq!(d.deliveries[0].outcome, Outcome::Trap);
    match &d.resolution {
        Some(Resolution::ToolApproval(t)) => {
            assert!(matches!(t.calls[0].verdict, Approval::Deny(_)), "{t:?}");
            assert!(t.calls[0].failure, "the deny is marked as a failure");
        }
        other => panic!("expected a tool approval, got {other:?}"),
    }
    let prompt = event("prompt.submitted", serde_json::json!({"prompt": "push it"}));
    let d = rt.dispatch(&prompt).unwrap();
    assert_eq!(d.deliveries[0].outcome, Outcome::Trap);
    match &d.resolution {
        Some(Resolution::Gate(g)) => {
            assert_eq!(
                g.verdict,
                Gate::Pass,
                "the broken reminder blocks no prompt"
            );
            assert!(
                g.answers[0].failure.is_some(),
                "its vote is marked as a failure"
            );
        }
        other => panic!("expected a gate, got {other:?}"),
    }
    // Both chosen: no fail-closed-by-default warning; audit shows each.
    assert!(hookrt::audit::author_warnings(&rt.hooks()[0]).is_empty());
    let audit = hookrt::audit::audit(&rt).to_text();
    assert!(
        audit.contains(
            "on failure of a decision: deny (actions.requested: deny, prompt.submitted: abstain)"
        ),
        "{audit}"
    );
    // The plain value keeps meaning what it meant: both fail closed.
    let plain = crate::common::TempAgent::new()
        .file("hooks/guard.rs", BROKEN_GUARD)
        .config("[hooks.guard]\non_failure = \"deny\"\n");
    let d = crate::common::load(plain.path()).dispatch(&prompt).unwrap();
    match &d.resolution {
        Some(Resolution::Gate(g)) => assert!(matches!(g.verdict, Gate::Block(_)), "{g:?}"),
        other => panic!("expected a gate, got {other:?}"),
    }
}

#[test]
fn on_failure_per_subscription_names_only_kinds_a_hook_votes_on() {
    let got =
        problems("[hooks.a]\non_failure = { \"message.completed\" = \"deny\" }\n").join(" | ");
    assert!(
        got.ends_with("`on_failure` names `message.completed`, which is no decision or gate kind a hook votes on by name \
             (one of `turn.stopping`, `prompt.submitted`, `actions.requested`, `file.edit.requested`, `permission.requested`, \
             `task.created`, `config.changed`, `compaction.requested`); a `*` or `observe:` handler's failure counts for nothing either way"),
        "{got}"
    );
    let got =
        problems("[hooks.a]\non_failure = { \"actions.requested\" = \"allow\" }\n").join(" | ");
    assert!(
        got.ends_with("unknown variant `allow`, expected `deny` or `abstain`"),
        "{got}"
    );
}
