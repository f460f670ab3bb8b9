//! The agents' bridges, input side, for every agent hookrt bridges (Claude
//! Code's own, in more detail, is `claude.rs`): each event of the pinned
//! release (one input per event in `tests/fixtures/<agent>/`) as an
//! envelope of its kind, the session and turn where the agent names them,
//! where it came from in the data, subagents in their scope, an event
//! hookrt does not know observed, and a broken input refused with the
//! reason.

use hookrt::front::bridge::{Bridge, BridgeError};
use hookrt::{EventClass, class_of};
use serde_json::{Value, json};

use crate::common::{agent_fixture, bridge_fixture};

/// The envelope of `bridge`'s `event` fixture, read as its command hook does.
fn read(bridge: Bridge, event: &str) -> hookrt::Envelope {
    let input = bridge_fixture(bridge, event);
    bridge
        .read(bridge.name(), &input, Some(event), "command")
        .unwrap_or_else(|e| panic!("{} {event}: {e}", bridge.name()))
        .envelope
}

#[test]
fn every_event_of_every_agent_maps_to_its_kind_and_says_where_it_came_from() {
    for bridge in Bridge::ALL {
        for (event, kind) in bridge.events() {
            let e = read(bridge, event);
            assert_eq!(&e.kind, kind, "{} {event}", bridge.name());
            assert_eq!(e.coordinates.agent, bridge.name());
            assert!(!e.coordinates.session.is_empty());
            assert_eq!(
                e.data["bridge"],
                json!({"agent": bridge.name(), "event": event, "transport": "command"}),
                "{} {event}",
                bridge.name()
            );
            for path in ["transcript_path", "transcriptPath", "agent_transcript_path"] {
                assert!(
                    e.data.get(path).is_none(),
                    "{} {event} drops {path}",
                    bridge.name()
                );
            }
            // A tool call to decide on is one action, its step its id.
            if kind == &"actions.requested" {
                let actions = e.data["actions"].as_array().unwrap();
                assert_eq!(actions.len(), 1, "{} {event}", bridge.name());
                assert_eq!(
                    e.coordinates.step.as_deref(),
                    actions[0]["call_id"].as_str()
                );
                assert!(actions[0]["tool"].is_string());
            }
        }
    }
}

#[test]
fn each_agents_tool_call_reaches_the_policy_in_the_same_shape() {
    // The shell command of each agent's tool call: the tool name the
    // example policy knows, the command where it reads it.
    for (bridge, event, tool) in [
        (Bridge::named("codex").unwrap(), "PreToolUse", "Bash"),
        (Bridge::named("copilot").unwrap(), "preToolUse", "bash"),
        (
            Bridge::named("opencode").unwrap(),
            "tool.execute.before",
            "bash",
        ),
        (
            Bridge::named("cursor").unwrap(),
            "beforeShellExecution",
            "shell",
        ),
        (
            Bridge::named("gemini").unwrap(),
            "BeforeTool",
            "run_shell_command",
        ),
    ] {
        let e = read(bridge, event);
        let action = &e.data["actions"][0];
        assert_eq!(action["tool"], tool, "{} {event}", bridge.name());
        assert!(action["input"]["command"].is_string(), "{action}");
    }
    // Copilot's arguments, also as JSON text (older releases), and
    // Cursor's MCP input, which may be JSON text too, become objects.
    let mut call: Value = serde_json::from_str(&agent_fixture("copilot", "preToolUse")).unwrap();
    call["toolArgs"] = json!("{\"command\": \"rm -rf build\"}");
    let e = Bridge::named("copilot")
        .unwrap()
        .read("copilot", &call.to_string(), Some("preToolUse"), "command")
        .unwrap()
        .envelope;
    assert_eq!(
        e.data["actions"][0]["input"],
        json!({"command": "rm -rf build"})
    );
    let mcp = read(Bridge::named("cursor").unwrap(), "beforeMCPExecution");
    assert_eq!(
        mcp.data["actions"][0]["input"],
        json!({"title": "x", "server_url": "https://mcp.example.com/sse"})
    );
}

#[test]
fn turns_and_subagents_are_where_each_agent_names_them() {
    let codex = read(Bridge::named("codex").unwrap(), "PreToolUse");
    assert_eq!(
        codex.coordinates.turn.as_deref(),
        Some("01a2434d-a756-7803-84ee-646d3f648b4c")
    );
    assert_eq!(codex.coordinates.step.as_deref(), Some("call_1"));
    let cursor = read(Bridge::named("cursor").unwrap(), "preToolUse");
    assert_eq!(
        cursor.coordinates.turn.as_deref(),
        Some("490b90b7-a2ce-4c2c-bb76-cb77b125df2f")
    );
    assert_eq!(
        cursor.coordinates.session,
        "668320d2-2fd8-4888-b33c-2a466fec86e7"
    );
    for (bridge, event, scope) in [
        (Bridge::named("codex").unwrap(), "SubagentStop", "explorer"),
        (Bridge::named("codex").unwrap(), "SubagentStart", "explorer"),
        (
            Bridge::named("copilot").unwrap(),
            "subagentStop",
            "reviewer",
        ),
        (Bridge::named("cursor").unwrap(), "subagentStop", "explore"),
    ] {
        let e = read(bridge, event);
        assert_eq!(
            e.coordinates.subagent.as_deref(),
            Some(scope),
            "{} {event}",
            bridge.name()
        );
    }
    // A Codex tool call from inside a subagent: its hooks decide it.
    let mut call: Value = serde_json::from_str(&agent_fixture("codex", "PreToolUse")).unwrap();
    call["agent_id"] = "agent-7".into();
    call["agent_type"] = "Explorer Bot".into();
    let e = Bridge::named("codex")
        .unwrap()
        .read("codex", &call.to_string(), None, "command")
        .unwrap()
        .envelope;
    assert_eq!(e.coordinates.subagent.as_deref(), Some("explorer-bot"));
    assert_eq!(
        read(Bridge::named("codex").unwrap(), "Stop")
            .coordinates
            .subagent,
        None
    );
}

#[test]
fn an_event_an_agent_adds_later_is_observed_not_refused() {
    for (bridge, name, kind) in [
        (
            Bridge::named("claude-code").unwrap(),
            "PreWidgetRender",
            "custom.claude.pre_widget_render",
        ),
        (
            Bridge::named("codex").unwrap(),
            "PostSkillRun",
            "custom.codex.post_skill_run",
        ),
        (
            Bridge::named("gemini").unwrap(),
            "AfterCompress",
            "custom.gemini.after_compress",
        ),
        (
            Bridge::named("cursor").unwrap(),
            "beforeTabAccept",
            "custom.cursor.before_tab_accept",
        ),
        (
            Bridge::named("copilot").unwrap(),
            "postResult",
            "custom.copilot.post_result",
        ),
    ] {
        let input = match bridge.name() {
            "copilot" => json!({"sessionId": "s", "widget": 7}),
            "cursor" => {
                json!({"hook_event_name": name, "conversation_id": "s", "widget": 7})
            }
            _ => json!({"hook_event_name": name, "session_id": "s", "widget": 7}),
        };
        let e = bridge
            .read(bridge.name(), &input.to_string(), Some(name), "http")
            .unwrap()
            .envelope;
        assert_eq!(e.kind, kind);
        assert_eq!(class_of(&e.kind), EventClass::Observe);
        assert_eq!(e.data["widget"], 7);
        assert_eq!(e.data["bridge"]["transport"], "http");
    }
}

#[test]
fn an_input_that_is_no_hook_input_is_refused_naming_the_agent_and_the_field() {
    let err = |bridge: Bridge, input: &str, event: Option<&str>| {
        bridge
            .read(bridge.name(), input, event, "command")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(
            Bridge::named("copilot").unwrap(),
            r#"{"sessionId": "s"}"#,
            None
        ),
        "not a Copilot CLI hook input: the input does not name its event: give it with --event"
    );
    assert_eq!(
        err(
            Bridge::named("copilot").unwrap(),
            r#"{"toolName": "bash"}"#,
            Some("preToolUse")
        ),
        "not a Copilot CLI hook input: `sessionId` or `session_id` is missing"
    );
    assert_eq!(
        err(
            Bridge::named("cursor").unwrap(),
            r#"{"hook_event_name": "stop"}"#,
            None
        ),
        "not a Cursor hook input: `conversation_id` or `session_id` is missing"
    );
    assert_eq!(
        err(
            Bridge::named("gemini").unwrap(),
            r#"{"hook_event_name": "BeforeTool", "session_id": "s"}"#,
            None
        ),
        "not a Gemini CLI hook input: BeforeTool without `tool_name`"
    );
    assert_eq!(
        err(
            Bridge::named("cursor").unwrap(),
            r#"{"hook_event_name": "beforeShellExecution", "conversation_id": "s"}"#,
            None
        ),
        "not a Cursor hook input: beforeShellExecution without `command`"
    );
    assert!(matches!(
        Bridge::named("codex")
            .unwrap()
            .read("codex", "[", None, "command"),
        Err(BridgeError::Json(_))
    ));
    // The event the input names wins over the one the command line gives.
    let e = Bridge::named("codex")
        .unwrap()
        .read(
            "codex",
            &agent_fixture("codex", "Stop"),
            Some("PreToolUse"),
            "command",
        )
        .unwrap();
    assert_eq!(e.name, "Stop");
}

/// An agent defined here only, to show that an agent is one `Protocol`:
/// Fable's hook input names its event in `event` and its session in
/// `session`; a step's tool call is `beforeStep`, a prompt `promptIn`
/// (which Fable lets through on a failing exit, so it is refused in
/// JSON); it reads back `{verdict, why}`.
mod fable {
    use hookrt::front::bridge::hook_input::{field, required_text};
    use hookrt::front::bridge::protocol::{
        CommandForm, FailClosed, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape,
        Silence, TimeUnit,
    };
    use hookrt::front::bridge::reply;
    use hookrt::{Resolution, event::Gate};
    use serde_json::{Map, Value, json};

    pub(super) static FABLE: Protocol = Protocol {
        agent: "fable",
        label: "Fable",
        word: "fable",
        events: &[
            ("beforeStep", "actions.requested"),
            ("promptIn", "prompt.submitted"),
        ],
        event_field: Some("event"),
        session_fields: &["session"],
        id_field: None,
        subagent_fields: None,
        kept: &[],
        dropped: &[],
        transcripts: None,
        map,
        turn_field: None,
        gates: &["beforeStep", "promptIn"],
        context_events: &[],
        answer,
        refusal,
        silence: Silence::Nothing,
        refuses_in_json: &["promptIn"],
        install: Some(Install {
            shape: Shape::Flat,
            project: ".fable/hooks.json",
            user: ".fable/hooks.json",
            home_env: None,
            tool_events: &[],
            not_installed: &[],
            http_hooks: true,
            command_only: &[],
            command: CommandForm::Line("command"),
            typed: false,
            name: None,
            timeout: ("timeout", TimeUnit::Seconds),
            fail_closed: Some(FailClosed::Flag("failClosed")),
        }),
        signature: None,
        openapi: OpenApi {
            operation_id: "fableHook",
            input_schema: "FableHookInput",
        },
    };

    fn map(
        event: &str,
        kind: &str,
        fields: &Map<String, Value>,
        id: &Reading,
    ) -> Result<Mapped, Missing> {
        let (step, data) = match event {
            "beforeStep" => {
                let tool = required_text(fields, "tool", event)?;
                let call = id.stand_in("call");
                let action = json!({"call_id": call, "tool": tool, "input": field(fields, "args")});
                (Some(call), json!({"actions": [action]}))
            }
            _ => (None, json!({"prompt": field(fields, "prompt")})),
        };
        Ok(Mapped {
            kind: kind.to_owned(),
            step,
            data,
        })
    }

    fn answer(_name: &str, resolution: Option<&Resolution>) -> Option<Value> {
        let (verdict, why) = match resolution? {
            Resolution::ToolApproval(t) => reply::tool_decision(t.calls.first()?)?,
            Resolution::Gate(g) => match &g.verdict {
                Gate::Block(why) => ("block", why.clone()),
                _ => return None,
            },
            _ => return None,
        };
        Some(json!({"verdict": verdict, "why": why}))
    }

    fn refusal(_name: &str, reason: &str) -> Value {
        json!({"verdict": "deny", "why": reply::refused(reason)})
    }
}

#[test]
fn an_agent_defined_in_one_protocol_is_read_answered_and_refused_like_the_others() {
    let fable = Bridge::of(&fable::FABLE);
    assert_eq!(fable.route(), "/v1/fable");
    assert!(Bridge::named("fable").is_none(), "not registered");
    let input =
        json!({"event": "beforeStep", "session": "s1", "tool": "bash", "args": {"command": "ls"}});
    let e = fable
        .read("fable", &input.to_string(), None, "command")
        .unwrap();
    assert_eq!(e.name, "beforeStep");
    assert_eq!(e.envelope.kind, "actions.requested");
    assert_eq!(e.envelope.coordinates.session, "s1");
    assert_eq!(e.envelope.data["actions"][0]["tool"], "bash");
    assert_eq!(e.envelope.data["bridge"]["agent"], "fable");
    let later = fable
        .read(
            "fable",
            r#"{"event": "afterNap", "session": "s1"}"#,
            None,
            "http",
        )
        .unwrap();
    assert_eq!(later.envelope.kind, "custom.fable.after_nap");
    let broken = fable.read(
        "fable",
        r#"{"event": "beforeStep", "session": "s1"}"#,
        None,
        "command",
    );
    assert_eq!(
        broken.unwrap_err().to_string(),
        "not a Fable hook input: beforeStep without `tool`"
    );
    // Which gate an input serves: the entry's event, else the raw input's.
    assert_eq!(
        fable.gate_served(Some("promptIn"), Some("{")),
        Some("promptIn")
    );
    assert_eq!(
        fable.gate_served(None, Some(r#"{"event": "beforeStep""#)),
        Some("beforeStep")
    );
    assert_eq!(
        fable.gate_served(Some("afterNap"), Some(r#""beforeStep""#)),
        None
    );
    let refused = fable.refusal("beforeStep", "no hooks");
    assert_eq!(refused["verdict"], "deny");
    let failed = fable.failure(Some("beforeStep"), "no hooks");
    assert_eq!((failed.stdout, failed.code), (None, 2));
    let failed = fable.failure(Some("promptIn"), "no hooks");
    assert_eq!(failed.code, 0);
    assert_eq!(failed.stdout.unwrap()["verdict"], "deny");
    assert_eq!(fable.failure(None, "no hooks").code, 1);
    assert_eq!(fable.no_opinion(), None);
}

/// `POST path` with a JSON `body` on `addr`: the status and the body.
fn post(addr: std::net::SocketAddr, path: &str, body: &str) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn an_agent_defined_in_one_protocol_has_its_route_on_the_server() {
    let rt = crate::common::load(&crate::common::example("agent"));
    let mut options = hookrt_serve::ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        hookrt_serve::Tokens::default(),
    );
    options.insecure_no_auth = true;
    options.agents = vec![Bridge::of(&fable::FABLE)];
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (tell, listening) = std::sync::mpsc::channel();
    let server = tokio.spawn(hookrt_serve::serve(
        rt,
        options,
        async {
            let _ = stopped.await;
        },
        move |bound| tell.send(bound.tcp().unwrap()).unwrap(),
    ));
    let addr = listening.recv().unwrap();
    let rm = json!({"event": "beforeStep", "session": "s1", "tool": "bash", "args": {"command": "rm -rf build/"}});
    let (status, answer) = post(addr, "/v1/fable", &rm.to_string());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["verdict"], "deny", "{answer}");
    assert!(
        answer["why"].as_str().unwrap().contains("rm -rf"),
        "{answer}"
    );
    // A broken input on a gate the entry names is refused in Fable's words.
    let (status, answer) = post(addr, "/v1/fable?event=beforeStep", "{");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["verdict"], "deny", "{answer}");
    // Only the agents given have a route.
    let (status, _) = post(addr, "/v1/claude-code", "{}");
    assert_eq!(status, 404);
    stop.send(()).unwrap();
    tokio.block_on(server).unwrap().unwrap();
}
