//! The `notify` grant through the `hookrt` binary, against a real D-Bus
//! (`notify_bus.rs`: a private `dbus-daemon` and a stand-in of the desktop
//! notification service). The three hooks ported from the public list
//! (`example-hooks/grants/hooks/desktop_notify.rs`, `codex_turn_notify.rs`,
//! `notification_tts.rs`) run on the agents' recorded inputs
//! (`tests/fixtures/`) and show what their originals showed; flooding, no
//! bus, a stalled notifier, hostile text and a hook without the grant end as
//! docs/sandbox.md says.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{TempAgent, agent_fixture, repo, with_stdin};
use crate::notify_bus::{Bus, Received};
use crate::{grants_folder, hookrt, run, text};

/// An agent folder holding the ported hook `slug` and `toml` as its
/// `hookrt.toml`, built.
fn agent_with(slug: &str, toml: &str) -> TempAgent {
    let agent = grants_folder(slug, toml);
    let built = run(&["build", agent.path().to_str().unwrap()]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    agent
}

/// `slug`'s table: the notify grant (`notify` the grant's own table's
/// lines) and a deadline room for a bus round trip on a busy machine.
fn granted(slug: &str, notify: &str) -> String {
    format!(
        "[hooks.\"{slug}\"]\ndeadline_ms = 5000\n\
         [hooks.\"{slug}\".grants]\nlog = {{}}\n\
         [hooks.\"{slug}\".grants.notify]\n{notify}\n"
    )
}

/// `hookrt hook --agent AGENT DIR` on `input`, with the session bus at
/// `bus` (`None`: no `DBUS_SESSION_BUS_ADDRESS` at all).
fn agent_hook(agent: &str, dir: &Path, input: &str, bus: Option<&str>) -> Output {
    let mut command = hookrt(&["hook", "--agent", agent, dir.to_str().unwrap()]);
    command.env_remove("DBUS_SESSION_BUS_ADDRESS");
    if let Some(bus) = bus {
        command.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    let out = with_stdin(command, input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    out
}

/// What the stand-in should have received from hook `slug`.
fn shown(slug: &str, summary: &str, body: &str, replaces_id: u32, id: u32) -> Received {
    Received {
        app_name: "hookrt".into(),
        replaces_id,
        summary: summary.into(),
        body: body.into(),
        urgency: Some(1),
        hook: Some(slug.into()),
        id,
    }
}

#[test]
fn claude_codes_notification_reaches_the_notifier_and_the_next_one_replaces_it() {
    let bus = Bus::with_notifier(false);
    let agent = agent_with("desktop_notify", &granted("desktop_notify", ""));
    let input = agent_fixture("claude", "Notification");
    for _ in 0..2 {
        agent_hook("claude-code", agent.path(), &input, Some(&bus.address));
    }
    let (title, body) = ("Claude Code", "Claude Code needs your attention");
    assert_eq!(
        bus.received(),
        [
            shown("desktop_notify", title, body, 0, 1),
            shown("desktop_notify", title, body, 1, 1)
        ]
    );
}

/// Codex's recorded `Stop` input with `last` as its last message.
fn codex_stop(last: &str) -> String {
    let mut stop: Value = serde_json::from_str(&agent_fixture("codex", "Stop")).unwrap();
    stop["last_assistant_message"] = last.into();
    stop.to_string()
}

#[test]
fn codex_turn_notify_groups_a_threads_turns_and_its_markup_and_controls_are_neutralised() {
    let bus = Bus::with_notifier(false);
    let agent = agent_with("codex_turn_notify", &granted("codex_turn_notify", ""));
    let recorded = agent_fixture("codex", "Stop");
    agent_hook("codex", agent.path(), &recorded, Some(&bus.address));
    let hostile = "<a href=\"https://evil.example\">open</a> & <img src=\"file:///etc/passwd\"/>\u{1b}[2J\u{202e}gpj.exe";
    agent_hook(
        "codex",
        agent.path(),
        &codex_stop(hostile),
        Some(&bus.address),
    );
    let title = "Codex: thread 01a2434d";
    assert_eq!(
        bus.received(),
        [
            shown(
                "codex_turn_notify",
                title,
                "DONE. tool output was: Chunk ID: 1a90ba Wall time: 0.0000 seconds Process exited with code 0 Original token count: 4 Output: hi-from-tool",
                0,
                1
            ),
            // The same thread: it replaces the first.
            shown(
                "codex_turn_notify",
                title,
                "&lt;a href=\"https://evil.example\"&gt;open&lt;/a&gt; &amp; &lt;img src=\"file:///etc/passwd\"/&gt;[2Jgpj.exe",
                1,
                1
            ),
        ]
    );
}

#[test]
fn notification_tts_tells_the_engineer_their_agent_needs_input_but_not_for_the_generic_wait() {
    let bus = Bus::with_notifier(false);
    let toml = granted("notification_tts", "")
        + "[hooks.\"notification_tts\".config]\nengineer_name = \"Ada\"\n";
    let agent = agent_with("notification_tts", &toml);
    let input = agent_fixture("claude", "Notification");
    agent_hook("claude-code", agent.path(), &input, Some(&bus.address));
    let mut generic: Value = serde_json::from_str(&input).unwrap();
    generic["message"] = "Claude is waiting for your input".into();
    generic["notification_type"] = "idle_prompt".into();
    agent_hook(
        "claude-code",
        agent.path(),
        &generic.to_string(),
        Some(&bus.address),
    );
    assert_eq!(
        bus.received(),
        [shown(
            "notification_tts",
            "Claude Code",
            "Ada, your agent needs your input",
            0,
            1
        )]
    );
}

/// `count` of Claude Code's notification events, as its bridge maps them.
fn notification_events(dir: &Path, count: usize) -> String {
    let path = dir.join("events.jsonl");
    let lines: Vec<String> = (0..count)
        .map(|i| {
            json!({
                "schema_version": 1, "id": format!("evt_notify_{i}"), "kind": "custom.claude.notification",
                "timestamp": "2026-12-06T10:00:00Z",
                "coordinates": {"agent": "claude-code", "session": "s1", "turn": null, "step": null, "sequence": i, "subagent": null},
                "data": {"message": "Claude needs your permission to use Bash", "title": "Permission needed", "notification_type": "permission_prompt"}
            })
            .to_string()
        })
        .collect();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_owned()
}

/// `hookrt run DIR --events EVENTS --logs` with the session bus at `bus`:
/// each delivery's `[hookrt] notify` line's `outcome` and `duration_ms`, and
/// the delivery's own outcome and error.
fn run_notify(dir: &Path, events: &str, bus: Option<&str>) -> Vec<(String, u64, Value, Value)> {
    let mut command = hookrt(&["run", dir.to_str().unwrap(), "--events", events, "--logs"]);
    command.env_remove("DBUS_SESSION_BUS_ADDRESS");
    if let Some(bus) = bus {
        command.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    let out = command.output().unwrap();
    text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|d| d["hook"].is_string())
        .map(|d| {
            let used = d["logs"]
                .as_array()
                .and_then(|logs| logs.iter().find(|l| l["message"] == "[hookrt] notify"))
                .unwrap_or_else(|| panic!("the use is recorded: {d}"));
            let field = |key: &str| {
                used["fields"]
                    .as_array()
                    .and_then(|f| f.iter().find(|pair| pair[0] == key))
                    .and_then(|pair| pair[1].as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let ms = field("duration_ms").parse().unwrap();
            (
                field("outcome"),
                ms,
                d["outcome"].clone(),
                d["error"].clone(),
            )
        })
        .collect()
}

#[test]
fn notify_flooding_is_rate_limited_and_each_refusal_is_recorded() {
    let bus = Bus::with_notifier(false);
    let agent = agent_with(
        "desktop_notify",
        &granted("desktop_notify", "per_minute = 2"),
    );
    let events = notification_events(agent.path(), 5);
    let uses = run_notify(agent.path(), &events, Some(&bus.address));
    let outcomes: Vec<&str> = uses.iter().map(|u| u.0.as_str()).collect();
    assert_eq!(
        outcomes,
        [
            "shown (id 1)",
            "shown (id 1)",
            "rate-limited (1 refused since load)",
            "rate-limited (2 refused since load)",
            "rate-limited (3 refused since load)"
        ]
    );
    assert_eq!(bus.received().len(), 2);
    // The ported hook lets a rate-limited notification pass.
    assert!(uses.iter().all(|u| u.2 == "ok"), "{uses:?}");
}

#[test]
fn one_process_per_event_keeps_one_rate_window() {
    let bus = Bus::with_notifier(false);
    let agent = agent_with(
        "desktop_notify",
        &granted("desktop_notify", "per_minute = 2"),
    );
    let input = agent_fixture("claude", "Notification");
    for _ in 0..4 {
        agent_hook("claude-code", agent.path(), &input, Some(&bus.address));
    }
    assert_eq!(bus.received().len(), 2, "{:?}", bus.received());
}

#[test]
fn notify_without_a_bus_or_with_a_dead_one_is_unavailable_saying_what_was_tried() {
    let agent = agent_with("desktop_notify", &granted("desktop_notify", ""));
    let events = notification_events(agent.path(), 1);
    let uses = run_notify(agent.path(), &events, None);
    assert_eq!(uses.len(), 1);
    let (outcome, _, delivery, error) = &uses[0];
    assert_eq!(
        outcome,
        "unavailable: no notifier: DBUS_SESSION_BUS_ADDRESS is not set in hookrt's environment \
         (tried the D-Bus session bus; the macOS and Windows notifiers are designed, not built)"
    );
    assert_eq!(delivery, "error");
    assert!(
        error
            .as_str()
            .unwrap()
            .contains("notify: unavailable: no notifier"),
        "{error}"
    );

    // A bus nobody listens on any more.
    let gone = Bus::empty().address.clone();
    let uses = run_notify(agent.path(), &events, Some(&gone));
    assert!(
        uses[0].0.starts_with(&format!(
            "unavailable: org.freedesktop.Notifications on the D-Bus session bus {gone}: cannot connect"
        )),
        "{uses:?}"
    );
    // A bus with no notifier on it.
    let bus = Bus::empty();
    let uses = run_notify(agent.path(), &events, Some(&bus.address));
    assert!(
        uses[0].0.contains("the call failed") && uses[0].0.contains("ServiceUnknown"),
        "{uses:?}"
    );
}

#[test]
fn a_stalled_notifier_ends_the_call_within_its_bound() {
    let bus = Bus::with_notifier(true);
    let agent = agent_with(
        "desktop_notify",
        &granted("desktop_notify", "timeout_ms = 300"),
    );
    let events = notification_events(agent.path(), 1);
    let start = Instant::now();
    let uses = run_notify(agent.path(), &events, Some(&bus.address));
    let (outcome, ms, delivery, _) = &uses[0];
    assert!(
        outcome.ends_with(": no answer within 300 ms") && outcome.contains(&bus.address),
        "{outcome}"
    );
    assert!((300..1_000).contains(ms), "the call took {ms} ms");
    assert_eq!(delivery, "error");
    assert_eq!(
        bus.received().len(),
        1,
        "the stand-in got it and never answered"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_hook_using_notify_without_the_grant_is_refused_at_load_and_audit_says_where_it_goes() {
    let agent = tempfile::tempdir().unwrap();
    fs::create_dir(agent.path().join("hooks")).unwrap();
    fs::copy(
        repo().join("example-hooks/grants/hooks/desktop_notify.rs"),
        agent.path().join("hooks/desktop_notify.rs"),
    )
    .unwrap();
    fs::write(
        agent.path().join("hookrt.toml"),
        "[hooks.\"desktop_notify\"]\ngrants = [\"log\"]\n",
    )
    .unwrap();
    let dir = agent.path().to_str().unwrap();
    let out = run(&["check", dir]);
    let said = text(&out.stderr) + &text(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("imports `hookrt:hook/notify@0.4.0`, which is not granted"),
        "{said}"
    );

    fs::write(
        agent.path().join("hookrt.toml"),
        granted("desktop_notify", "per_minute = 3"),
    )
    .unwrap();
    let audit = hookrt(&["audit", dir])
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
        .output()
        .unwrap();
    let audit = text(&audit.stdout);
    assert!(
        audit.contains(
            "may notify shows notifications via org.freedesktop.Notifications on the D-Bus session bus \
             unix:path=/run/user/1000/bus, as app `hookrt` with hint x-hookrt-hook=desktop_notify"
        ) && audit.contains("may notify at most 3 a minute, 2000 ms each"),
        "{audit}"
    );
}
