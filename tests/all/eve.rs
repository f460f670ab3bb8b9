//! The Eve bridge on Eve's own lines (tests/fixtures/eve/stream.ndjson: one
//! line per kind of Eve's public stream, shapes from Eve's docs and its
//! conformance fixtures; line 9 is the docs' envelope example verbatim).

use hookrt::event::EveStream;
use hookrt::{Envelope, EventClass, Resolution, class_of};

use crate::common::{TempAgent, load, repo};

fn lines() -> Vec<String> {
    std::fs::read_to_string(repo().join("tests/fixtures/eve/stream.ndjson"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn read_all() -> Vec<Envelope> {
    let mut stream = EveStream::new("weather", "ses_1");
    lines()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            stream
                .envelope(l)
                .unwrap_or_else(|e| panic!("line {}: {e}", i + 1))
        })
        .collect()
}

#[test]
fn every_kind_of_eve_stream_becomes_an_envelope() {
    let events = read_all();
    assert_eq!(events.len(), lines().len());
    let mut kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in [
        "session.waiting",
        "turn.cancelled",
        "step.failed",
        "action.partial",
        "action.input.appended",
        "input.resolved",
        "task.started",
        "task.settled",
        "task.detached",
        "reasoning.appended",
        "reasoning.completed",
        "message.appended",
        "result.completed",
        "compaction.requested",
        "compaction.completed",
        "authorization.required",
        "authorization.completed",
        "context.cleared",
        "subagent.called",
        "subagent.completed",
    ] {
        assert!(kinds.contains(&kind), "the fixture has `{kind}`");
    }
    assert_eq!(kinds.len(), 38);
}

#[test]
fn the_docs_example_maps_field_by_field() {
    let e = &read_all()[8];
    assert_eq!(e.id, "evt_01KYJBZA88B4M9XN3RTC5FDGHJ");
    assert_eq!(e.kind, "message.completed");
    assert_eq!(e.timestamp, "2026-07-27T18:04:11.912Z");
    assert_eq!(e.coordinates.agent, "weather");
    assert_eq!(e.coordinates.session, "ses_1");
    assert_eq!(e.coordinates.turn.as_deref(), Some("turn_0"));
    assert_eq!(e.coordinates.step.as_deref(), Some("turn_0.step_0"));
    assert_eq!(e.coordinates.sequence, 8, "the line's place in the stream");
    assert_eq!(e.coordinates.ordinal, Some(0));
    assert_eq!(e.coordinates.subagent, None);
    assert_eq!(e.attempt, 1);
    assert_eq!(
        e.data,
        serde_json::json!({"message":"Sunny and 72°F.","finishReason":"stop","sequence":0,"stepIndex":0,"turnId":"turn_0"})
    );
}

#[test]
fn events_without_data_or_id_get_empty_data_and_the_same_minted_id_each_read() {
    let mut a = EveStream::new("weather", "ses_1");
    let mut b = EveStream::new("weather", "ses_1");
    let line = r#"{"type":"session.completed","meta":{"at":"2026-07-27T18:06:00.000Z"}}"#;
    let (x, y) = (a.envelope(line).unwrap(), b.envelope(line).unwrap());
    assert_eq!(x.data, serde_json::json!({}));
    assert!(x.id.starts_with("eve-"));
    assert_eq!(x.id, y.id, "deterministic");
    assert_ne!(
        a.envelope(line).unwrap().id,
        x.id,
        "a repeated line gets its own id"
    );
}

#[test]
fn a_child_tasks_prompts_on_the_parent_stream_reach_the_childs_hooks() {
    let events = read_all();
    let scoped: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter(|e| e.kind.starts_with("approval."))
        .map(|e| (e.kind.as_str(), e.coordinates.subagent.as_deref()))
        .collect();
    assert_eq!(
        scoped,
        [
            ("approval.candidate", Some("researcher")),
            ("approval.settled", Some("researcher"))
        ]
    );
    // The task's own lifecycle is the parent's.
    let started = events.iter().find(|e| e.kind == "task.started").unwrap();
    assert_eq!(started.coordinates.subagent, None);
    let mut child = EveStream::new("weather", "wrun_child").for_subagent("researcher");
    let e = child.envelope(&lines()[0]).unwrap();
    assert_eq!(e.coordinates.subagent.as_deref(), Some("researcher"));
}

#[test]
fn eve_tool_calls_are_decided_by_policy_hooks() {
    let requested = read_all()
        .into_iter()
        .find(|e| e.kind == "actions.requested")
        .unwrap();
    assert_eq!(class_of(&requested.kind), EventClass::Decision);
    assert_eq!(requested.data["actions"][0]["call_id"], "call_weather_1");
    assert_eq!(requested.data["actions"][0]["tool"], "get_weather");
    assert_eq!(
        requested.data["actions"][0]["callId"], "call_weather_1",
        "Eve's own fields stay"
    );
    let agent = TempAgent::new().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let Some(Resolution::ToolApproval(t)) =
        load(agent.path()).dispatch(&requested).unwrap().resolution
    else {
        panic!("a tool approval")
    };
    assert_eq!(t.calls.len(), 1);
    assert_eq!(t.calls[0].call_id, "call_weather_1");
    assert_eq!(t.calls[0].tool, "get_weather");
    assert_eq!(t.calls[0].decided_by.as_deref(), Some("deny_all"));
}

#[test]
fn a_retried_step_keeps_its_idempotency_keys() {
    let mut stream = EveStream::new("weather", "ses_1");
    let step = |id: &str, kind: &str| {
        format!(
            r#"{{"type":"{kind}","data":{{"turnId":"turn_0","stepIndex":0,"sequence":0,"message":"m","finishReason":"stop","modelId":"x"}},"meta":{{"id":"{id}","at":"2026-07-27T18:04:11.912Z"}}}}"#
        )
    };
    let first: Vec<Envelope> = ["a1", "a2", "a3"]
        .iter()
        .zip(["step.started", "message.completed", "message.completed"])
        .map(|(id, kind)| stream.envelope(&step(id, kind)).unwrap())
        .collect();
    // Eve runs the step again: new ids, later stream positions.
    let retry: Vec<Envelope> = ["b1", "b2", "b3"]
        .iter()
        .zip(["step.started", "message.completed", "message.completed"])
        .map(|(id, kind)| stream.envelope(&step(id, kind)).unwrap())
        .collect();
    for (a, b) in first.iter().zip(&retry) {
        assert_ne!(a.id, b.id);
        assert_ne!(a.coordinates.sequence, b.coordinates.sequence);
        assert_eq!(
            a.idempotency_key, b.idempotency_key,
            "{} keeps its key",
            a.kind
        );
    }
    assert_ne!(
        first[1].idempotency_key, first[2].idempotency_key,
        "two messages, two keys"
    );
    assert!(first[1].idempotency_key.starts_with("ik2-"));
}

#[test]
fn a_wrapped_subagent_event_without_its_subagent_name_is_refused_not_given_to_the_parent() {
    let wrapped = |name: &str| {
        format!(
            r#"{{"type":"subagent.event","meta":{{"at":"2026-07-27T18:04:11.912Z"}},"data":{{{name}"event":{{"type":"message.received","meta":{{"at":"2026-07-27T18:04:11.912Z"}},"data":{{"message":{{"id":"m1","role":"user","content":"secret of the child"}}}}}}}}}}"#
        )
    };
    let mut stream = EveStream::new("weather", "ses_1");
    for name in ["", r#""subagentName":"","#] {
        let err = stream.envelope(&wrapped(name)).unwrap_err().to_string();
        assert!(err.contains("without its `subagentName`"), "{err}");
    }
    let e = stream
        .envelope(&wrapped(r#""subagentName":"researcher","#))
        .unwrap();
    assert_eq!(e.coordinates.subagent.as_deref(), Some("researcher"));
    // A child's own stream knows its scope: its wrappers need no name.
    let mut child = EveStream::new("weather", "ses_2").for_subagent("researcher");
    assert_eq!(
        child
            .envelope(&wrapped(""))
            .unwrap()
            .coordinates
            .subagent
            .as_deref(),
        Some("researcher")
    );
}

#[test]
fn a_line_that_is_not_an_eve_event_is_refused_with_the_reason() {
    let mut stream = EveStream::new("weather", "ses_1");
    let err = |l: &str, s: &mut EveStream| s.envelope(l).unwrap_err().to_string();
    assert_eq!(
        err("[1]", &mut stream),
        "not an Eve stream event: a line must be a JSON object"
    );
    assert_eq!(
        err(r#"{"type":"turn.started","data":{}}"#, &mut stream),
        "not an Eve stream event: `meta` (with `at`) is missing"
    );
    assert!(
        err(
            r#"{"type":"call.requested","meta":{"at":"2026-07-27T18:04:11.912Z"}}"#,
            &mut stream
        )
        .contains("call.requested")
    );
}
