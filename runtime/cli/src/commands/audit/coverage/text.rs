//! The coverage report as a person reads it: the trail's verdict, a table
//! per session with each call's gates under it, then the summary.

use super::report::{Call, Flag, Report, Session};

/// The columns of a session's table.
const HEAD: [&str; 7] = [
    "CALL",
    "TOOL",
    "SCOPE",
    "DECIDED IN",
    "VERDICT",
    "DECIDED BY",
    "COVERAGE",
];

/// The whole report as text.
pub(super) fn text(report: &Report) -> String {
    let mut out = String::new();
    match (report.trail_holds, &report.trail_verdict) {
        (Some(true), Some(v)) => out.push_str(&format!("the trail holds: {v}\n\n")),
        (Some(false), Some(v)) => out.push_str(&format!(
            "THE TRAIL DOES NOT HOLD: {v}\n(what follows is what the journal says now, which is no proof of what happened)\n\n"
        )),
        _ => {}
    }
    for s in &report.sessions {
        session(&mut out, s);
    }
    out.push_str(&summary(report));
    if !report.trail {
        out.push_str("(no trail table in this journal: component digests unknown)\n");
    }
    out
}

/// One session's table, each call's gates (or unseen decision) under it.
fn session(out: &mut String, s: &Session) {
    out.push_str(&format!("session {} (agent {})\n", s.session, s.agent));
    let rows: Vec<[String; 7]> = s.calls.iter().map(row).collect();
    let mut widths = HEAD.map(str::len);
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
    out.push_str(&line(&HEAD));
    for (r, c) in rows.iter().zip(&s.calls) {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push_str(&line(&cells));
        details(out, c);
    }
    out.push('\n');
}

/// A call's cells in the table.
fn row(c: &Call) -> [String; 7] {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    [
        or_dash(&c.call_id),
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
        or_dash(&c.verdict),
        or_dash(&c.decided_by),
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
}

/// The lines under a call: each gate of each decision, or each result
/// that came with no decision before it.
fn details(out: &mut String, c: &Call) {
    let short = |c: &Option<String>| match c {
        Some(c) => c.chars().take(12).collect::<String>(),
        None => "-".to_owned(),
    };
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

/// `N calls, M flagged: ...`.
fn summary(report: &Report) -> String {
    let counts: Vec<String> = Flag::ALL
        .iter()
        .filter_map(|f| {
            let n = report.summary.count(*f);
            (n > 0).then(|| format!("{n} {}", f.name()))
        })
        .collect();
    format!(
        "{} calls, {} flagged{}{}\n",
        report.summary.calls,
        report.summary.flagged,
        if counts.is_empty() { "" } else { ": " },
        counts.join(", ")
    )
}
