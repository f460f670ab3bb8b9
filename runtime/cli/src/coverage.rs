//! `hookrt audit coverage J`: proof of coverage from a journal. Lists, per
//! session, every tool call the journal saw (from its decision events,
//! `actions.requested` and `permission.requested`, and from its results,
//! `action.result`), which gates decided it (hook, handler, component
//! digest, answer), and flags each call that was not covered:
//!
//! - `bypassed`: a result arrived with no decision event for its call before it;
//! - `ungated_subagent`: a call in a subagent's scope that no decision hook of
//!   that subagent (`subagents/<id>/…`, subscribed to the decision by name)
//!   voted on;
//! - `all_abstained`: decided, but every hook that answered abstained (or none
//!   answered);
//! - `undecided`: its decision event is stored but was never resolved (its
//!   deliveries did not finish).
//!
//! The trail is verified first (`hookrt journal verify`, by `--key` when
//! given): the report says whether it holds, and a journal whose trail does
//! not hold is flagged as a whole, since what it says is then no proof.
//! The journal is opened read-only (no schema set-up, no lock: WAL lets it
//! be read beside a running service). Component digests come from the
//! journal's `trail` table when it has one (its `deliveries` entries), else
//! they are null.
//! Exit code: 0 nothing flagged and the trail holds, 1 something flagged or
//! the trail does not hold, 2 the journal could not be read.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use serde_json::Value;

const ACTIONS_REQUESTED: &str = "actions.requested";
const PERMISSION_REQUESTED: &str = "permission.requested";
const ACTION_RESULT: &str = "action.result";

/// Why a call is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Flag {
    Bypassed,
    UngatedSubagent,
    AllAbstained,
    Undecided,
}

impl Flag {
    const ALL: [Flag; 4] = [
        Flag::Bypassed,
        Flag::UngatedSubagent,
        Flag::AllAbstained,
        Flag::Undecided,
    ];

    fn name(self) -> &'static str {
        match self {
            Flag::Bypassed => "bypassed",
            Flag::UngatedSubagent => "ungated_subagent",
            Flag::AllAbstained => "all_abstained",
            Flag::Undecided => "undecided",
        }
    }
}

/// The whole report (`--json` prints it as it is).
#[derive(Serialize)]
struct Report {
    journal: PathBuf,
    /// Whether the journal has a `trail` table (component digests).
    trail: bool,
    /// Whether its trail holds (`null` without a trail table).
    trail_holds: Option<bool>,
    /// What verifying the trail said: what it holds, or where it breaks.
    trail_verdict: Option<String>,
    sessions: Vec<Session>,
    flagged: Vec<Flagged>,
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    calls: usize,
    flagged: usize,
    bypassed: usize,
    ungated_subagent: usize,
    all_abstained: usize,
    undecided: usize,
}

#[derive(Serialize)]
struct Session {
    agent: String,
    session: String,
    calls: Vec<Call>,
}

#[derive(Serialize)]
struct Call {
    /// Null for a permission request that named no call.
    call_id: Option<String>,
    tool: String,
    /// The subagent whose scope the call is in; null for the primary agent.
    subagent: Option<String>,
    /// The final verdict (`allow`, `ask`, `deny`, `abstain`): the last
    /// resolved decision's; null when none was resolved.
    verdict: Option<String>,
    decided_by: Option<String>,
    decisions: Vec<Decision>,
    results: Vec<ResultSeen>,
    flags: Vec<Flag>,
}

#[derive(Serialize)]
struct Decision {
    /// The decision event's id.
    event: String,
    seq: i64,
    kind: String,
    /// `data.bridge` of an event an agent's bridge translated.
    #[serde(skip_serializing_if = "Option::is_none")]
    bridge: Option<Value>,
    /// Null: the event was never resolved.
    verdict: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    decided_by: Option<String>,
    failure: bool,
    gates: Vec<Gate>,
}

/// One hook's vote on the call.
#[derive(Serialize)]
struct Gate {
    hook: String,
    /// The subscription the vote came from (`actions.requested`,
    /// `rewrite:actions.requested`, `*`); null for hookrt's own votes.
    handler: Option<String>,
    /// Whether it subscribed to the decision by name (a `*` observer's
    /// vote is an abstention it could not help).
    decides: bool,
    /// sha256 of the hook's component, from the journal's trail.
    component: Option<String>,
    answer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<Value>,
}

#[derive(Serialize)]
struct ResultSeen {
    event: String,
    seq: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
}

#[derive(Serialize)]
struct Flagged {
    agent: String,
    session: String,
    call_id: Option<String>,
    tool: String,
    subagent: Option<String>,
    flags: Vec<Flag>,
}

/// `hookrt audit coverage J [--json]`.
pub fn coverage(journal: &Path, json: bool, expect: &hookrt::journal::Expect<'_>) -> ExitCode {
    let mut report = match read(journal) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hookrt: journal {}: {e:#}", journal.display());
            return ExitCode::from(2);
        }
    };
    if report.trail {
        let (holds, verdict) = match hookrt::journal::verify(journal, expect) {
            Ok(v) => (true, crate::journal::verdict(&v, true)),
            Err(e) => (false, e.to_string()),
        };
        report.trail_holds = Some(holds);
        report.trail_verdict = Some(verdict);
    }
    let written = if json {
        serde_json::to_string_pretty(&report)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(std::io::stdout().lock(), "{text}"))
    } else {
        write!(std::io::stdout().lock(), "{}", text(&report))
    };
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("hookrt: {e}");
            return ExitCode::from(2);
        }
    }
    if report.flagged.is_empty() && report.trail_holds != Some(false) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One decision or result event as stored.
struct Row {
    seq: i64,
    id: String,
    agent: String,
    kind: String,
    envelope: Value,
    resolution: Option<Value>,
}

/// A call being gathered: its key in the session, and what was seen of it.
struct Gathering {
    call: Call,
    first_seq: i64,
}

fn read(path: &Path) -> Result<Report> {
    if !path.is_file() {
        bail!(
            "no such file (a journal is written by `hookrt run --journal` or `hookrt serve --journal`)"
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .context("cannot open it read-only")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // One snapshot for every query below.
    conn.execute_batch("BEGIN")
        .context("cannot read it (is it a SQLite database?)")?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| {
            s.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .context("cannot read it (is it a SQLite database?)")?;
    for needed in ["events", "deliveries", "resolutions"] {
        if !tables.iter().any(|t| t == needed) {
            bail!("not a hookrt journal (no `{needed}` table)");
        }
    }
    let trail = tables.iter().any(|t| t == "trail");
    let components = if trail {
        components(&conn)?
    } else {
        HashMap::new()
    };
    let handlers = handlers(&conn)?;
    let rows = rows(&conn)?;
    conn.execute_batch("COMMIT")?;

    // (agent, session) -> calls by key, in order of first sight.
    let mut sessions: Vec<((String, String), Vec<Gathering>)> = Vec::new();
    for row in rows {
        let coordinates = &row.envelope["coordinates"];
        let session = coordinates["session"].as_str().unwrap_or("").to_owned();
        let subagent = coordinates["subagent"].as_str().map(str::to_owned);
        let data = &row.envelope["data"];
        let key = (row.agent.clone(), session);
        let at = match sessions.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                sessions.push((key, Vec::new()));
                sessions.len() - 1
            }
        };
        let calls = &mut sessions[at].1;
        let event_handlers = handlers.get(&row.seq);
        let gate = |vote: &Value| {
            gate(
                vote,
                &row.kind,
                event_handlers,
                components.get(&(row.agent.clone(), row.id.clone())),
            )
        };
        let decision = |verdict: Option<&Value>, resolved: Option<&Value>, gates: Vec<Gate>| {
            let (answer, reason) = verdict.map(answer_of).unzip();
            Decision {
                event: row.id.clone(),
                seq: row.seq,
                kind: row.kind.clone(),
                bridge: data.get("bridge").cloned(),
                verdict: answer,
                reason: reason.flatten(),
                decided_by: resolved
                    .and_then(|r| r["decided_by"].as_str())
                    .map(str::to_owned),
                failure: resolved.is_some_and(|r| r["failure"] == true),
                gates,
            }
        };
        match row.kind.as_str() {
            ACTIONS_REQUESTED => {
                let resolved = row
                    .resolution
                    .as_ref()
                    .map(|r| &r["tool_approval"]["calls"]);
                let actions = data["actions"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                for (i, action) in actions.iter().enumerate() {
                    let call_id = action["call_id"].as_str().map(str::to_owned);
                    let tool = action["tool"].as_str().unwrap_or("");
                    // The resolution's calls are aligned with the actions.
                    let decided = resolved.and_then(|calls| {
                        calls
                            .as_array()?
                            .iter()
                            .find(|c| c["call_id"].as_str() == call_id.as_deref())
                            .or_else(|| calls.get(i))
                    });
                    let gates = votes(decided).iter().map(gate).collect();
                    let d = decision(decided.map(|d| &d["verdict"]), decided, gates);
                    call_in(calls, call_id, tool, &subagent, row.seq)
                        .decisions
                        .push(d);
                }
            }
            PERMISSION_REQUESTED => {
                let call_id = data["call_id"].as_str().map(str::to_owned);
                let tool = data["tool"].as_str().unwrap_or("");
                let decided = row.resolution.as_ref().map(|r| &r["permission"]);
                let gates = votes(decided).iter().map(gate).collect();
                let d = decision(decided.map(|d| &d["verdict"]), decided, gates);
                call_in(calls, call_id, tool, &subagent, row.seq)
                    .decisions
                    .push(d);
            }
            ACTION_RESULT => {
                let call_id = data["call_id"].as_str().map(str::to_owned);
                let tool = data["tool"].as_str().unwrap_or("");
                call_in(calls, call_id, tool, &subagent, row.seq)
                    .results
                    .push(ResultSeen {
                        event: row.id.clone(),
                        seq: row.seq,
                        status: data["status"].as_str().map(str::to_owned),
                    });
            }
            _ => {}
        }
    }

    let mut report = Report {
        journal: path.to_path_buf(),
        trail,
        trail_holds: None,
        trail_verdict: None,
        sessions: Vec::new(),
        flagged: Vec::new(),
        summary: Summary {
            calls: 0,
            flagged: 0,
            bypassed: 0,
            ungated_subagent: 0,
            all_abstained: 0,
            undecided: 0,
        },
    };
    for ((agent, session), mut calls) in sessions {
        calls.sort_by_key(|g| g.first_seq);
        let calls: Vec<Call> = calls
            .into_iter()
            .map(|g| {
                let mut call = g.call;
                call.flags = flags(&call);
                let last = call.decisions.iter().rev().find(|d| d.verdict.is_some());
                call.verdict = last.and_then(|d| d.verdict.clone());
                call.decided_by = last.and_then(|d| d.decided_by.clone());
                call
            })
            .collect();
        for call in &calls {
            report.summary.calls += 1;
            if call.flags.is_empty() {
                continue;
            }
            report.summary.flagged += 1;
            for flag in &call.flags {
                *match flag {
                    Flag::Bypassed => &mut report.summary.bypassed,
                    Flag::UngatedSubagent => &mut report.summary.ungated_subagent,
                    Flag::AllAbstained => &mut report.summary.all_abstained,
                    Flag::Undecided => &mut report.summary.undecided,
                } += 1;
            }
            report.flagged.push(Flagged {
                agent: agent.clone(),
                session: session.clone(),
                call_id: call.call_id.clone(),
                tool: call.tool.clone(),
                subagent: call.subagent.clone(),
                flags: call.flags.clone(),
            });
        }
        report.sessions.push(Session {
            agent,
            session,
            calls,
        });
    }
    Ok(report)
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

/// What is wrong with `call`'s coverage. A call without a decision before
/// its result is `bypassed`; a decided call in a subagent's scope that no
/// decision hook of that scope voted on is `ungated_subagent` (whatever
/// decided it: hookrt's own fail-closed `hookrt:unscoped` refusal, or no
/// one); any other decided call whose every vote abstained is `all_abstained`.
fn flags(call: &Call) -> Vec<Flag> {
    let mut flags = Vec::new();
    let first_decision = call.decisions.iter().map(|d| d.seq).min();
    if call
        .results
        .iter()
        .any(|r| first_decision.is_none_or(|d| d > r.seq))
    {
        flags.push(Flag::Bypassed);
    }
    if call.decisions.is_empty() {
        return flags;
    }
    let resolved: Vec<&Decision> = call
        .decisions
        .iter()
        .filter(|d| d.verdict.is_some())
        .collect();
    if resolved.is_empty() {
        flags.push(Flag::Undecided);
        return flags;
    }
    let gates = || resolved.iter().flat_map(|d| &d.gates);
    if let Some(id) = &call.subagent {
        let scope = format!("subagents/{id}/");
        if !gates().any(|g| g.decides && g.hook.starts_with(&scope)) {
            flags.push(Flag::UngatedSubagent);
            return flags;
        }
    }
    if gates().all(|g| g.answer == "abstain") {
        flags.push(Flag::AllAbstained);
    }
    flags
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
fn gate(
    vote: &Value,
    kind: &str,
    handlers: Option<&Vec<(String, String)>>,
    components: Option<&HashMap<String, String>>,
) -> Gate {
    let hook = vote["hook"].as_str().unwrap_or("").to_owned();
    let handler = handlers.and_then(|hs| {
        hs.iter()
            .filter(|(h, _)| *h == hook)
            .map(|(_, handler)| handler.clone())
            .next()
    });
    let decides = handler
        .as_deref()
        .is_some_and(|h| h == kind || h.strip_prefix("rewrite:") == Some(kind));
    let (answer, reason) = answer_of(vote);
    Gate {
        component: components.and_then(|c| c.get(&hook)).cloned(),
        hook,
        handler,
        decides,
        answer,
        reason,
        failure: vote.get("failure").cloned(),
    }
}

/// Each decision event's voting deliveries `(hook, handler)`, in plan order
/// (`observe:` subscriptions cast no vote).
fn handlers(conn: &Connection) -> Result<HashMap<i64, Vec<(String, String)>>> {
    let mut stmt = conn.prepare(
        "SELECT d.event_seq, d.hook, d.handler FROM deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE e.kind IN ('actions.requested', 'permission.requested')
           AND d.handler NOT LIKE 'observe:%'
         ORDER BY d.event_seq, d.position",
    )?;
    let mut out: HashMap<i64, Vec<(String, String)>> = HashMap::new();
    for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        let (seq, hook, handler): (i64, String, String) = row?;
        out.entry(seq).or_default().push((hook, handler));
    }
    // A hook subscribed by name and as `*` votes by name: list that first.
    for list in out.values_mut() {
        list.sort_by_key(|(_, h)| h == "*");
    }
    Ok(out)
}

/// Component digests from the trail: each `deliveries` entry's hooks ran
/// with the components of the `hooks` entry before it. (agent, event id) ->
/// hook -> sha256.
fn components(conn: &Connection) -> Result<HashMap<(String, String), HashMap<String, String>>> {
    let mut stmt = conn
        .prepare("SELECT kind, body FROM trail WHERE kind IN ('hooks', 'deliveries') ORDER BY seq")
        .context("cannot read its trail")?;
    let mut out: HashMap<(String, String), HashMap<String, String>> = HashMap::new();
    let mut current = Value::Null;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (kind, body) = row?;
        let Ok(body) = serde_json::from_str::<Value>(&body) else {
            continue;
        };
        if kind == "hooks" {
            current = body["components"].clone();
            continue;
        }
        let (Some(event), Some(agent)) = (body["event"].as_str(), body["agent"].as_str()) else {
            continue;
        };
        let hooks = out.entry((agent.to_owned(), event.to_owned())).or_default();
        for d in body["deliveries"].as_array().into_iter().flatten() {
            if let Some(hook) = d["hook"].as_str()
                && let Some(component) = current[hook].as_str()
            {
                hooks.insert(hook.to_owned(), component.to_owned());
            }
        }
    }
    Ok(out)
}

/// Every decision and result event, in journal order, with its resolution.
fn rows(conn: &Connection) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare(
        "SELECT e.seq, e.id, e.agent, e.kind, e.envelope, r.resolution
         FROM events e LEFT JOIN resolutions r ON r.event_seq = e.seq
         WHERE e.kind IN ('actions.requested', 'permission.requested', 'action.result')
         ORDER BY e.seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, id, agent, kind, envelope, resolution) = row?;
        let envelope = serde_json::from_str(&envelope)
            .with_context(|| format!("event {id} (seq {seq}): its envelope is not JSON"))?;
        let resolution = resolution
            .map(|r| serde_json::from_str(&r))
            .transpose()
            .with_context(|| format!("event {id} (seq {seq}): its resolution is not JSON"))?;
        out.push(Row {
            seq,
            id,
            agent,
            kind,
            envelope,
            resolution,
        });
    }
    Ok(out)
}

/// The report as a person reads it: a table per session, then the summary.
fn text(report: &Report) -> String {
    let mut out = String::new();
    match (report.trail_holds, &report.trail_verdict) {
        (Some(true), Some(v)) => out.push_str(&format!("the trail holds: {v}\n\n")),
        (Some(false), Some(v)) => out.push_str(&format!(
            "THE TRAIL DOES NOT HOLD: {v}\n(what follows is what the journal says now, which is no proof of what happened)\n\n"
        )),
        _ => {}
    }
    let short = |c: &Option<String>| match c {
        Some(c) => c.chars().take(12).collect::<String>(),
        None => "-".to_owned(),
    };
    for s in &report.sessions {
        out.push_str(&format!("session {} (agent {})\n", s.session, s.agent));
        let rows: Vec<[String; 7]> = s
            .calls
            .iter()
            .map(|c| {
                [
                    c.call_id.clone().unwrap_or_else(|| "-".to_owned()),
                    c.tool.clone(),
                    c.subagent.clone().unwrap_or_else(|| "primary".to_owned()),
                    if c.decisions.is_empty() {
                        "-".to_owned()
                    } else {
                        c.decisions
                            .iter()
                            .map(|d| d.event.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    },
                    c.verdict.clone().unwrap_or_else(|| "-".to_owned()),
                    c.decided_by.clone().unwrap_or_else(|| "-".to_owned()),
                    if c.flags.is_empty() {
                        "ok".to_owned()
                    } else {
                        c.flags
                            .iter()
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(",")
                    },
                ]
            })
            .collect();
        let head = [
            "CALL",
            "TOOL",
            "SCOPE",
            "DECIDED IN",
            "VERDICT",
            "DECIDED BY",
            "COVERAGE",
        ];
        let mut widths = head.map(str::len);
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let mut l = String::from(" ");
            for (cell, w) in cells.iter().zip(widths) {
                l.push_str(&format!(" {cell:<w$}"));
            }
            l.trim_end().to_owned() + "\n"
        };
        out.push_str(&line(&head));
        for (r, c) in rows.iter().zip(&s.calls) {
            let cells: Vec<&str> = r.iter().map(String::as_str).collect();
            out.push_str(&line(&cells));
            for d in &c.decisions {
                for g in &d.gates {
                    out.push_str(&format!(
                        "      {} gate {} ({}) component {}: {}{}\n",
                        d.event,
                        g.hook,
                        g.handler.as_deref().unwrap_or("hookrt"),
                        short(&g.component),
                        g.answer,
                        g.reason
                            .as_deref()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    ));
                }
            }
            if c.decisions.is_empty() {
                for r in &c.results {
                    out.push_str(&format!(
                        "      {} result with no decision before it\n",
                        r.event
                    ));
                }
            }
        }
        out.push('\n');
    }
    let counts: Vec<String> = Flag::ALL
        .iter()
        .filter_map(|f| {
            let n = match f {
                Flag::Bypassed => report.summary.bypassed,
                Flag::UngatedSubagent => report.summary.ungated_subagent,
                Flag::AllAbstained => report.summary.all_abstained,
                Flag::Undecided => report.summary.undecided,
            };
            (n > 0).then(|| format!("{n} {}", f.name()))
        })
        .collect();
    out.push_str(&format!(
        "{} calls, {} flagged{}{}\n",
        report.summary.calls,
        report.summary.flagged,
        if counts.is_empty() { "" } else { ": " },
        counts.join(", ")
    ));
    if !report.trail {
        out.push_str("(no trail table in this journal: component digests unknown)\n");
    }
    out
}
