//! From the journal's records to sessions of calls: each decision and
//! result event is put with the call it is about (by `call_id`), and each
//! vote becomes a gate with the handler it came from and its component.

use std::collections::HashMap;

use hookrt::journal::{CallEvent, Voter};
use serde_json::Value;

use super::report::{Call, Decision, Gate, ResultSeen, Session};

const ACTIONS_REQUESTED: &str = "actions.requested";
const PERMISSION_REQUESTED: &str = "permission.requested";
const ACTION_RESULT: &str = "action.result";

/// A call being gathered, and where it was first seen.
struct Gathering {
    call: Call,
    first_seq: i64,
}

/// Calls by (agent, session), in order of first sight.
type Sessions = Vec<((String, String), Vec<Gathering>)>;

/// The sessions the events speak of, each call concluded, in order of
/// first sight.
pub(super) fn sessions(events: &[CallEvent]) -> Vec<Session> {
    let mut sessions: Sessions = Vec::new();
    for event in events {
        let coordinates = &event.envelope["coordinates"];
        let session = coordinates["session"].as_str().unwrap_or("").to_owned();
        let key = (event.agent.clone(), session);
        let at = match sessions.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                sessions.push((key, Vec::new()));
                sessions.len() - 1
            }
        };
        add(&mut sessions[at].1, event);
    }
    sessions
        .into_iter()
        .map(|((agent, session), mut calls)| {
            calls.sort_by_key(|g| g.first_seq);
            let calls = calls
                .into_iter()
                .map(|g| {
                    let mut call = g.call;
                    call.conclude();
                    call
                })
                .collect();
            Session {
                agent,
                session,
                calls,
            }
        })
        .collect()
}

/// Puts `event` with the calls it is about.
fn add(calls: &mut Vec<Gathering>, event: &CallEvent) {
    let subagent = event.envelope["coordinates"]["subagent"]
        .as_str()
        .map(str::to_owned);
    let data = &event.envelope["data"];
    let call_of = |v: &Value| {
        (
            v["call_id"].as_str().map(str::to_owned),
            v["tool"].as_str().unwrap_or("").to_owned(),
        )
    };
    match event.kind.as_str() {
        ACTIONS_REQUESTED => {
            let resolved = event
                .resolution
                .as_ref()
                .map(|r| &r["tool_approval"]["calls"]);
            let actions = data["actions"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            for (i, action) in actions.iter().enumerate() {
                let (call_id, tool) = call_of(action);
                // The resolution's calls are aligned with the actions.
                let decided = resolved.and_then(|calls| {
                    calls
                        .as_array()?
                        .iter()
                        .find(|c| c["call_id"].as_str() == call_id.as_deref())
                        .or_else(|| calls.get(i))
                });
                let d = decision(event, decided);
                call_in(calls, call_id, &tool, &subagent, event.seq)
                    .decisions
                    .push(d);
            }
        }
        PERMISSION_REQUESTED => {
            let (call_id, tool) = call_of(data);
            let d = decision(event, event.resolution.as_ref().map(|r| &r["permission"]));
            call_in(calls, call_id, &tool, &subagent, event.seq)
                .decisions
                .push(d);
        }
        ACTION_RESULT => {
            let (call_id, tool) = call_of(data);
            call_in(calls, call_id, &tool, &subagent, event.seq)
                .results
                .push(ResultSeen {
                    event: event.id.clone(),
                    seq: event.seq,
                    status: data["status"].as_str().map(str::to_owned),
                });
        }
        _ => {}
    }
}

/// What `event` decided of one call (`decided`: its part of the
/// resolution, `None` while unresolved), with the gates that voted.
fn decision(event: &CallEvent, decided: Option<&Value>) -> Decision {
    let gates = votes(decided)
        .iter()
        .map(|vote| gate(vote, &event.kind, &event.voters, &event.components))
        .collect();
    let (answer, reason) = decided.map(|d| answer_of(&d["verdict"])).unzip();
    Decision {
        event: event.id.clone(),
        seq: event.seq,
        kind: event.kind.clone(),
        bridge: event.envelope["data"].get("bridge").cloned(),
        verdict: answer,
        reason: reason.flatten(),
        decided_by: decided
            .and_then(|r| r["decided_by"].as_str())
            .map(str::to_owned),
        failure: decided.is_some_and(|r| r["failure"] == true),
        gates,
    }
}

/// The call `call_id` of a session's `calls`, added (first seen at `seq`)
/// when it is not there yet; a call without an id is always a new one.
fn call_in<'a>(
    calls: &'a mut Vec<Gathering>,
    call_id: Option<String>,
    tool: &str,
    subagent: &Option<String>,
    seq: i64,
) -> &'a mut Call {
    let found = call_id.as_ref().and_then(|id| {
        calls
            .iter()
            .position(|g| g.call.call_id.as_ref() == Some(id))
    });
    let i = found.unwrap_or_else(|| {
        calls.push(Gathering {
            call: Call {
                call_id,
                tool: tool.to_owned(),
                subagent: subagent.clone(),
                verdict: None,
                decided_by: None,
                decisions: Vec::new(),
                results: Vec::new(),
                flags: Vec::new(),
            },
            first_seq: seq,
        });
        calls.len() - 1
    });
    &mut calls[i].call
}

/// The votes (`answers`) of a resolved call or permission decision.
fn votes(decided: Option<&Value>) -> &[Value] {
    decided
        .and_then(|d| d["answers"].as_array())
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// An answer as `(answer, reason)`: an approval's `{"answer", "text"}`, a
/// permission's `{"answer", "message"}` (or a rewrite for an allow).
fn answer_of(v: &Value) -> (String, Option<String>) {
    let answer = v["answer"].as_str().unwrap_or("unknown").to_owned();
    let reason = ["text", "message"]
        .iter()
        .find_map(|k| v[*k].as_str())
        .map(str::to_owned);
    (answer, reason)
}

/// One vote of an event, with the handler it came from (a hook's
/// subscription by name, else its `*`) and its component.
fn gate(vote: &Value, kind: &str, voters: &[Voter], components: &HashMap<String, String>) -> Gate {
    let hook = vote["hook"].as_str().unwrap_or("").to_owned();
    let handler = voters
        .iter()
        .find(|v| v.hook == hook)
        .map(|v| v.handler.clone());
    let decides = handler
        .as_deref()
        .is_some_and(|h| h == kind || h.strip_prefix("rewrite:") == Some(kind));
    let (answer, reason) = answer_of(vote);
    Gate {
        component: components.get(&hook).cloned(),
        hook,
        handler,
        decides,
        answer,
        reason,
        failure: vote.get("failure").cloned(),
    }
}
