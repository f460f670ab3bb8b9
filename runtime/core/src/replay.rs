//! Replay: a recorded session through an agent folder's hooks, deterministically,
//! as records an expectation file can pin (`hookrt test`, and a test harness).
//!
//! [`replay`] pins the runtime's sandbox ([`Runtime::pin`]: fixed wall clock,
//! monotonic clock and randomness, the whole deadline as every budget) and
//! delivers each envelope as it is written, attempt included: a line repeating
//! an id with `"attempt": 2` is a redelivery and reaches the hooks again
//! (nothing is deduplicated: there is no journal). What it records leaves out
//! what a machine changes (time taken, fuel): per delivery the event, hook,
//! handler, attempt, outcome, error, log lines, console output and, for a hook
//! that answered a decision or edit event, its `answer` (its votes, or its edit
//! account); per decision or edit event the resolution as a whole.
//!
//! [`Replay::to_jsonl`] is the expectation file, one JSON record per line with
//! keys in a fixed order, so replaying the same session twice gives the same
//! bytes; [`Replay::compare`] names the event, the hook and the field of every
//! difference from an expectation.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::delivery::record::{Dispatch, Resolution};
use crate::event::envelope::{Envelope, EnvelopeError};
use crate::event::kind::{WILDCARD, observed_kind};
use crate::runtime::Runtime;

/// What a replayed session did: one record per delivery and per resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The records, in delivery order (each event's deliveries, then its resolution).
    pub records: Vec<Value>,
}

/// A line of an expectation file that is not a JSON record.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: not a JSON record: {source}")]
pub struct ExpectationError {
    /// Its line number, from 1.
    pub line: usize,
    /// What the JSON parser said.
    pub source: serde_json::Error,
}

/// One way an expectation and a replay differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The event id and kind, e.g. `evt_0005 (actions.requested)`.
    pub event: String,
    /// The hook and handler (`policy, handler actions.requested`), or `resolution`.
    pub subject: String,
    /// The field, as a path into the record (`outcome`, `resolution.calls[1].verdict`),
    /// or empty when the whole record is missing or unexpected.
    pub field: String,
    /// What the expectation says (`-` when it has no such record).
    pub expected: String,
    /// What the replay did (`-` when it has no such record).
    pub actual: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.field.is_empty() {
            "the record".to_owned()
        } else {
            format!("`{}`", self.field)
        };
        write!(
            f,
            "{}, {}: {field} differs\n  expected: {}\n  actual:   {}",
            self.event, self.subject, self.expected, self.actual
        )
    }
}

/// Delivers `events` in order through `rt`'s hooks, pinned for replay (the
/// runtime stays pinned). Load a fresh runtime per replay: hooks' `state` and
/// reused instances carry over from one replay to the next otherwise.
pub fn replay(rt: &Runtime, events: &[Envelope]) -> Result<Replay, EnvelopeError> {
    rt.pin();
    let mut records = Vec::new();
    for envelope in events {
        let dispatch = rt.dispatch(envelope)?;
        records.extend(records_of(envelope, &dispatch));
    }
    Ok(Replay { records })
}

/// Each hook's part of a resolution: its vote (per requested call for a tool
/// approval) or its edit account, without the hook's name.
fn answers_by_hook(resolution: &Resolution) -> Map<String, Value> {
    let mut by = Map::new();
    match resolution {
        // A hook with a specific handler and `*` votes twice; its specific
        // handler runs first, so its first vote is the one it answered.
        Resolution::ToolApproval(t) => {
            for (i, call) in t.calls.iter().enumerate() {
                for vote in &call.answers {
                    if let Value::Array(list) =
                        by.entry(vote.hook.clone()).or_insert_with(|| json!([]))
                        && list.len() == i
                    {
                        list.push(without_hook(vote));
                    }
                }
            }
        }
        Resolution::FileEdit(f) => first_of_each_hook(&mut by, &f.answers, |v| &v.hook),
        Resolution::Gate(g) => first_of_each_hook(&mut by, &g.answers, |v| &v.hook),
        Resolution::Permission(p) => first_of_each_hook(&mut by, &p.answers, |v| &v.hook),
        Resolution::Edit(e) => first_of_each_hook(&mut by, &e.accounts, |a| &a.hook),
        Resolution::Context(_) => {}
    }
    by
}

/// Each hook's first entry of `entries` (a vote, an edit account), without
/// the hook's name.
fn first_of_each_hook<T: serde::Serialize>(
    by: &mut Map<String, Value>,
    entries: &[T],
    hook: impl Fn(&T) -> &String,
) {
    for entry in entries {
        by.entry(hook(entry).clone())
            .or_insert_with(|| without_hook(entry));
    }
}

/// `entry` as JSON without its `hook` (the record names it already).
fn without_hook(entry: &impl serde::Serialize) -> Value {
    match serde_json::to_value(entry).unwrap_or(Value::Null) {
        Value::Object(mut m) => {
            m.remove("hook");
            Value::Object(m)
        }
        other => other,
    }
}

fn records_of(envelope: &Envelope, d: &Dispatch) -> Vec<Value> {
    let mut out = Vec::new();
    let mut answers = d
        .resolution
        .as_ref()
        .map(answers_by_hook)
        .unwrap_or_default();
    for delivery in &d.deliveries {
        let mut r = Map::new();
        r.insert("event".into(), json!(d.event_id));
        r.insert("kind".into(), json!(d.kind));
        r.insert("attempt".into(), json!(delivery.attempt));
        r.insert("hook".into(), json!(delivery.hook));
        r.insert("handler".into(), json!(delivery.handler));
        r.insert("outcome".into(), json!(delivery.outcome.to_string()));
        if let Some(e) = &delivery.error {
            r.insert("error".into(), json!(e));
        }
        if !delivery.logs.is_empty() {
            let logs: Vec<Value> = delivery
                .logs
                .iter()
                .map(|l| {
                    let fields: Map<String, Value> = l
                        .fields
                        .iter()
                        .map(|(k, v)| (k.clone(), json!(v)))
                        .collect();
                    json!({"level": l.level, "message": l.message, "fields": fields})
                })
                .collect();
            r.insert("logs".into(), Value::Array(logs));
        }
        if !delivery.console.is_empty() {
            r.insert("console".into(), json!(delivery.console));
        }
        // A `*` or `observe:` handler of a hook that also answered does not repeat it.
        if !hookrt_observer(&delivery.handler)
            && let Some(answer) = answers.remove(&delivery.hook)
        {
            r.insert("answer".into(), answer);
        }
        out.push(Value::Object(r));
    }
    if let Some(resolution) = &d.resolution {
        let mut r = Map::new();
        r.insert("event".into(), json!(d.event_id));
        r.insert("kind".into(), json!(d.kind));
        r.insert("attempt".into(), json!(envelope.attempt));
        r.insert(
            "resolution".into(),
            serde_json::to_value(resolution).unwrap_or(Value::Null),
        );
        out.push(Value::Object(r));
    }
    out
}

fn hookrt_observer(handler: &str) -> bool {
    handler == WILDCARD || observed_kind(handler).is_some()
}

/// Identifies a record across an expectation and a replay.
fn key(record: &Value) -> (String, String) {
    let s = |k: &str| record[k].as_str().unwrap_or("?").to_owned();
    let event = format!(
        "{} ({}), attempt {}",
        s("event"),
        s("kind"),
        record["attempt"].as_u64().unwrap_or(1)
    );
    let subject = if record.get("resolution").is_some() {
        "resolution".to_owned()
    } else {
        format!("hook {}, handler {}", s("hook"), s("handler"))
    };
    (event, subject)
}

/// A delivery of a replay that did not end `ok` (an error, a trap, a timeout,
/// fuel or memory run out): `hookrt test --update` names it and writes
/// nothing, unless told the failures are expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The event id and kind, e.g. `evt_0005 (actions.requested), attempt 1`.
    pub event: String,
    /// The hook and handler (`hook policy, handler actions.requested`).
    pub subject: String,
    /// The outcome as reports write it (`trap`, `timeout`, ...).
    pub outcome: String,
    /// What the hook or the sandbox said, when anything.
    pub error: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}: {}", self.event, self.subject, self.outcome)?;
        match &self.error {
            Some(e) => write!(f, " ({e})"),
            None => Ok(()),
        }
    }
}

impl Replay {
    /// The deliveries that failed, in the replay's order.
    pub fn failures(&self) -> Vec<Failure> {
        self.records
            .iter()
            .filter(|r| r.get("hook").is_some() && r["outcome"] != "ok")
            .map(|r| {
                let (event, subject) = key(r);
                Failure {
                    event,
                    subject,
                    outcome: r["outcome"].as_str().unwrap_or("?").to_owned(),
                    error: r["error"].as_str().map(str::to_owned),
                }
            })
            .collect()
    }

    /// The expectation file: one record per line, ending in a newline.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for r in &self.records {
            out.push_str(&r.to_string());
            out.push('\n');
        }
        out
    }

    /// Every difference from `expected` (an expectation file's text), in the
    /// replay's order; empty when they agree. A line that is not JSON is an error
    /// naming its line number.
    pub fn compare(&self, expected: &str) -> Result<Vec<Difference>, ExpectationError> {
        let mut want = Vec::new();
        for (n, line) in expected.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).map_err(|source| ExpectationError {
                line: n + 1,
                source,
            })?;
            want.push(v);
        }
        let mut diffs = Vec::new();
        let mut used = vec![false; want.len()];
        for got in &self.records {
            let k = key(got);
            let found = want
                .iter()
                .enumerate()
                .find(|(i, w)| !used[*i] && key(w) == k);
            match found {
                Some((i, w)) => {
                    used[i] = true;
                    let mut fields = Vec::new();
                    diff_value("", w, got, &mut fields);
                    diffs.extend(
                        fields
                            .into_iter()
                            .map(|(field, expected, actual)| Difference {
                                event: k.0.clone(),
                                subject: k.1.clone(),
                                field,
                                expected,
                                actual,
                            }),
                    );
                }
                None => diffs.push(Difference {
                    event: k.0,
                    subject: k.1,
                    field: String::new(),
                    expected: "-".into(),
                    actual: got.to_string(),
                }),
            }
        }
        for (w, _) in want.iter().zip(&used).filter(|(_, u)| !**u) {
            let (event, subject) = key(w);
            diffs.push(Difference {
                event,
                subject,
                field: String::new(),
                expected: w.to_string(),
                actual: "-".into(),
            });
        }
        Ok(diffs)
    }
}

/// Leaf differences between `a` (expected) and `b` (actual) under `path`.
fn diff_value(path: &str, a: &Value, b: &Value, out: &mut Vec<(String, String, String)>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff_value(&join(k), p, q, out),
                    (p, q) => out.push((
                        join(k),
                        p.map_or("-".into(), Value::to_string),
                        q.map_or("-".into(), Value::to_string),
                    )),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff_value(&format!("{path}[{i}]"), p, q, out);
            }
        }
        _ if a != b => out.push((path.to_owned(), a.to_string(), b.to_string())),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(lines: &[&str]) -> Replay {
        Replay {
            records: lines
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        }
    }

    #[test]
    fn a_changed_verdict_names_the_event_the_subject_and_the_field() {
        let got = replay(&[
            r#"{"event":"e1","kind":"actions.requested","attempt":1,"hook":"p","handler":"actions.requested","outcome":"ok"}"#,
            r#"{"event":"e1","kind":"actions.requested","attempt":1,"resolution":{"tool_approval":{"calls":[{"verdict":"allow"}]}}}"#,
        ]);
        let want = got.to_jsonl().replace("\"allow\"", "{\"deny\":\"no\"}");
        let diffs = got.compare(&want).unwrap();
        assert_eq!(diffs.len(), 1);
        assert_eq!(
            diffs[0].to_string(),
            "e1 (actions.requested), attempt 1, resolution: `resolution.tool_approval.calls[0].verdict` differs\n  expected: {\"deny\":\"no\"}\n  actual:   \"allow\""
        );
        assert!(got.compare(&got.to_jsonl()).unwrap().is_empty());
    }

    #[test]
    fn missing_and_unexpected_records_are_named() {
        let got = replay(&[
            r#"{"event":"e1","kind":"k","attempt":2,"hook":"a","handler":"*","outcome":"ok"}"#,
        ]);
        let want =
            r#"{"event":"e1","kind":"k","attempt":1,"hook":"a","handler":"*","outcome":"ok"}"#;
        let diffs = got.compare(want).unwrap();
        assert_eq!(diffs.len(), 2);
        assert_eq!(diffs[0].event, "e1 (k), attempt 2");
        assert_eq!(diffs[0].expected, "-");
        assert_eq!(diffs[1].event, "e1 (k), attempt 1");
        assert_eq!(diffs[1].actual, "-");
        assert_eq!(
            got.compare("nope").unwrap_err().to_string(),
            "line 1: not a JSON record: expected ident at line 1 column 2"
        );
    }
}
