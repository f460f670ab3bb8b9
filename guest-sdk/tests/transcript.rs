//! The example agent's recorded transcript parses with the SDK's typed data structs.

use std::collections::HashSet;

use hookrt_sdk::events::*;
use hookrt_sdk::{Event, HookError};

const TRANSCRIPT: &str = include_str!("../../example-hooks/agent/transcript.jsonl");

fn events() -> Vec<Event> {
    TRANSCRIPT
        .lines()
        .enumerate()
        .map(|(n, line)| {
            Event::from_json(line).unwrap_or_else(|err| panic!("line {}: {err}", n + 1))
        })
        .collect()
}

/// Parse the event's data into the struct for its kind.
fn parse_typed(event: &Event) -> Result<(), HookError> {
    match event.kind() {
        SessionStarted::KIND => event.data::<SessionStarted>().map(drop),
        SessionCompleted::KIND => event.data::<SessionCompleted>().map(drop),
        SessionFailed::KIND => event.data::<SessionFailed>().map(drop),
        TurnStarted::KIND => event.data::<TurnStarted>().map(drop),
        TurnCompleted::KIND => event.data::<TurnCompleted>().map(drop),
        TurnFailed::KIND => event.data::<TurnFailed>().map(drop),
        StepStarted::KIND => event.data::<StepStarted>().map(drop),
        StepCompleted::KIND => event.data::<StepCompleted>().map(drop),
        MessageReceived::KIND => event.data::<MessageReceived>().map(drop),
        MessageCompleted::KIND => event.data::<MessageCompleted>().map(drop),
        ActionsRequested::KIND => event.data::<ActionsRequested>().map(drop),
        ActionResult::KIND => event.data::<ActionResult>().map(drop),
        InputRequested::KIND => event.data::<InputRequested>().map(drop),
        InputReceived::KIND => event.data::<InputReceived>().map(drop),
        FileEditRequested::KIND => event.data::<FileEditRequested>().map(drop),
        PromptSubmitted::KIND => event.data::<PromptSubmitted>().map(drop),
        TurnStopping::KIND => event.data::<TurnStopping>().map(drop),
        PermissionRequested::KIND => event.data::<PermissionRequested>().map(drop),
        TaskCreated::KIND => event.data::<TaskCreated>().map(drop),
        ConfigChanged::KIND => event.data::<ConfigChanged>().map(drop),
        other => Err(HookError::new(format!(
            "kind `{other}` is not in the vocabulary"
        ))),
    }
}

#[test]
fn every_transcript_event_parses_into_its_typed_data() {
    for event in events() {
        if let Err(err) = parse_typed(&event) {
            panic!("{}: {err}", event.id());
        }
        assert!(
            KINDS.contains(&event.kind()),
            "{}: unknown kind",
            event.id()
        );
    }
}

#[test]
fn transcript_envelopes_are_ordered_and_unique() {
    let events = events();
    let mut ids = HashSet::new();
    for (n, event) in events.iter().enumerate() {
        assert_eq!(event.schema_version(), 1);
        assert_eq!(event.coordinates().sequence, n as u64, "{}", event.id());
        assert!(
            ids.insert(event.id().to_owned()),
            "duplicate id {}",
            event.id()
        );
        if n > 0 {
            assert!(
                event.timestamp() > events[n - 1].timestamp(),
                "{}",
                event.id()
            );
        }
    }
    assert_eq!(events.first().map(Event::kind), Some("session.started"));
    assert_eq!(events.last().map(Event::kind), Some("session.completed"));
}

#[test]
fn transcript_covers_the_scenarios_later_tests_rely_on() {
    let events = events();
    let kinds: HashSet<&str> = events.iter().map(Event::kind).collect();
    for kind in [
        "input.requested",
        "input.received",
        "file.edit.requested",
        "action.result",
    ] {
        assert!(kinds.contains(kind), "missing {kind}");
    }
    let failed_tools = events
        .iter()
        .filter_map(|e| e.data::<ActionResult>().ok())
        .filter(|r| r.status == ActionStatus::Error)
        .count();
    assert_eq!(failed_tools, 1);
    assert!(
        TRANSCRIPT.contains("sk-live-"),
        "the planted fake secret is missing"
    );
}

#[test]
fn data_refuses_the_wrong_kind() {
    let first = &events()[0];
    let err = first.data::<MessageCompleted>().expect_err("kind mismatch");
    assert!(
        err.to_string()
            .contains("`session.started`, not `message.completed`"),
        "{err}"
    );
}

/// The agent input state of every `step.completed` and `turn.completed`, in order.
fn states() -> Vec<(String, AgentInput)> {
    events()
        .iter()
        .filter_map(|e| {
            let state = match e.kind() {
                StepCompleted::KIND => e.data::<StepCompleted>().ok()?.state,
                TurnCompleted::KIND => e.data::<TurnCompleted>().ok()?.state,
                _ => return None,
            };
            Some((
                e.id().to_owned(),
                state.unwrap_or_else(|| panic!("{}: no state", e.id())),
            ))
        })
        .collect()
}

#[test]
fn every_edit_event_carries_a_valid_growing_state() {
    let states = states();
    assert_eq!(states.len(), 9, "7 step.completed and 2 turn.completed");
    let first_message = states[0].1.messages[0].clone();
    assert_eq!(first_message.id, "msg_u1");
    for (n, (id, state)) in states.iter().enumerate() {
        assert!(
            state.calls_and_results_paired(),
            "{id}: calls and results not paired"
        );
        assert_eq!(state.immutable_history, 1, "{id}");
        assert_eq!(
            state.messages[0], first_message,
            "{id}: immutable history changed"
        );
        assert!(state.extras.is_empty(), "{id}");
        assert!(
            state.progress["turn"].is_u64() && state.progress["tokens"].is_u64(),
            "{id}"
        );
        if n > 0 {
            let before = &states[n - 1].1;
            assert!(
                state.tool_results.len() >= before.tool_results.len(),
                "{id}"
            );
            assert!(state.messages.len() >= before.messages.len(), "{id}");
        }
    }
}

#[test]
fn transcript_has_the_decisions_the_example_hooks_answer() {
    let requested: Vec<RequestedAction> = events()
        .iter()
        .filter_map(|e| e.data::<ActionsRequested>().ok())
        .flat_map(|r| r.actions)
        .collect();
    assert!(requested.iter().any(|a| a.tool == "http_fetch"));
    assert!(requested.iter().any(|a| {
        a.input["command"]
            .as_str()
            .is_some_and(|c| c.contains("rm -rf"))
    }));

    // protected-paths pairs read_file outputs with the edit's before_content.
    let read = events()
        .iter()
        .filter_map(|e| e.data::<ActionResult>().ok())
        .find(|r| r.tool == "read_file")
        .and_then(|r| r.output)
        .expect("a read_file result");
    let edit = events()
        .iter()
        .find_map(|e| e.data::<FileEditRequested>().ok())
        .expect("a file edit");
    assert_eq!(read["path"], edit.path.as_str());
    assert_eq!(read["content"].as_str(), edit.before_content.as_deref());
}
