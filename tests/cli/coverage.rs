//! `hookrt audit coverage J`: proof of coverage over a recorded session. The
//! transcript `tests/fixtures/coverage/transcript.jsonl` runs through an agent
//! folder whose primary scope has the example policy (denies `rm -rf`,
//! abstains otherwise), whose subagent `researcher` has the same policy, and
//! whose subagent `scout` has only an observer (`*`): no decision hook. Its
//! calls: one the policy denies, one every hook abstains on, a result for a
//! call never requested, a call of `scout` and a denied call of `researcher`.
//! The command flags exactly the abstained, the bypassed and scout's call.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{copy, example, hookrt_command, repo};

/// The agent folder: `hooks/policy`, `subagents/researcher/hooks/policy`,
/// `subagents/scout/hooks/audit.rs` (an observer of every event).
fn agent() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("agent");
    copy(&example("agent/hooks/policy"), &a.join("hooks/policy")).unwrap();
    copy(
        &example("agent/hooks/policy"),
        &a.join("subagents/researcher/hooks/policy"),
    )
    .unwrap();
    copy(
        &example("agent/hooks/audit.rs"),
        &a.join("subagents/scout/hooks/audit.rs"),
    )
    .unwrap();
    dir
}

/// Runs `transcript` through the agent into a journal, then `hookrt audit
/// coverage` over it with `extra` arguments.
fn coverage(dir: &Path, transcript: &Path, extra: &[&str]) -> Output {
    let db = dir.join("j.db");
    let run = hookrt_command()
        .arg("run")
        .arg(dir.join("agent"))
        .arg("--events")
        .arg(transcript)
        .arg("--journal")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "hookrt run: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    hookrt_command()
        .args(["audit", "coverage"])
        .arg(&db)
        .args(extra)
        .output()
        .unwrap()
}

fn transcript() -> std::path::PathBuf {
    repo().join("tests/fixtures/coverage/transcript.jsonl")
}

/// `(call_id, flags)` of each flagged call, in journal order.
fn flagged(report: &Value) -> Vec<(String, Vec<String>)> {
    report["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let flags = f["flags"].as_array().unwrap();
            (
                f["call_id"].as_str().unwrap().to_owned(),
                flags
                    .iter()
                    .map(|x| x.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn coverage_flags_exactly_the_bypassed_the_all_abstained_and_the_ungated_subagent_call() {
    let dir = agent();
    let out = coverage(dir.path(), &transcript(), &["--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let owned = |(id, flags): (&str, &[&str])| {
        (
            id.to_owned(),
            flags.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        flagged(&report),
        [
            ("call_read", &["all_abstained"][..]),
            ("call_ghost", &["bypassed"][..]),
            ("call_scout", &["ungated_subagent"][..]),
        ]
        .map(owned)
    );
    assert_eq!(report["flagged"][2]["subagent"], "scout");
    let summary = &report["summary"];
    assert_eq!(
        (summary["calls"].as_u64(), summary["flagged"].as_u64()),
        (Some(5), Some(3))
    );

    // Every call, with the gates that decided it.
    let sessions = report["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        (&sessions[0]["agent"], &sessions[0]["session"]),
        (&Value::from("coder"), &Value::from("ses_cov"))
    );
    let calls = sessions[0]["calls"].as_array().unwrap();
    let call = |id: &str| calls.iter().find(|c| c["call_id"] == id).unwrap();
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "call_rm",
            "call_read",
            "call_ghost",
            "call_scout",
            "call_researcher"
        ]
    );
    // (a) denied by the policy: covered.
    let rm = call("call_rm");
    assert_eq!(
        (&rm["verdict"], &rm["decided_by"]),
        (&"deny".into(), &"policy".into())
    );
    assert_eq!(rm["flags"], serde_json::json!([]));
    assert_eq!(rm["decisions"][0]["event"], "evt_c02");
    let gate = &rm["decisions"][0]["gates"][0];
    assert_eq!(
        (
            &gate["hook"],
            &gate["handler"],
            &gate["answer"],
            gate["decides"].as_bool()
        ),
        (
            &"policy".into(),
            &"actions.requested".into(),
            &"deny".into(),
            Some(true)
        )
    );
    // The digest comes from the journal's trail when it has one.
    if report["trail"] == true {
        assert_eq!(gate["component"].as_str().map(str::len), Some(64), "{gate}");
    } else {
        assert_eq!(gate["component"], Value::Null);
    }
    // (b) every hook abstained.
    assert_eq!(call("call_read")["verdict"], "abstain");
    assert_eq!(call("call_read")["results"][0]["event"], "evt_c04");
    // (c) a result, and no decision.
    let ghost = call("call_ghost");
    assert_eq!(ghost["decisions"], serde_json::json!([]));
    assert_eq!(ghost["results"][0]["event"], "evt_c05");
    // (d) scout's only vote is its observer's abstention.
    let scout = &call("call_scout")["decisions"][0]["gates"];
    assert_eq!(scout.as_array().unwrap().len(), 1);
    assert_eq!(
        (
            &scout[0]["hook"],
            &scout[0]["handler"],
            scout[0]["decides"].as_bool()
        ),
        (&"subagents/scout/audit".into(), &"*".into(), Some(false))
    );
    // The researcher's own policy decided its call: covered.
    let researcher = call("call_researcher");
    assert_eq!(researcher["subagent"], "researcher");
    assert_eq!(researcher["decided_by"], "subagents/researcher/policy");
    assert_eq!(researcher["flags"], serde_json::json!([]));

    // The same as text: a table and the summary line.
    let text = hookrt_command()
        .args(["audit", "coverage"])
        .arg(dir.path().join("j.db"))
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(1));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("5 calls, 3 flagged: 1 bypassed, 1 ungated_subagent, 1 all_abstained\n"),
        "{text}"
    );
    assert!(text.contains("session ses_cov (agent coder)\n"), "{text}");
}

/// The transcript's session start and the call the policy denies alone,
/// written into `dir`.
fn covered(dir: &Path) -> std::path::PathBuf {
    let covered: String = std::fs::read_to_string(transcript())
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""id":"evt_c01""#) || l.contains(r#""id":"evt_c02""#))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = dir.join("covered.jsonl");
    std::fs::write(&file, covered).unwrap();
    file
}

#[test]
fn coverage_of_a_transcript_whose_calls_were_all_decided_exits_zero() {
    let dir = agent();
    let file = covered(dir.path());
    let out = coverage(dir.path(), &file, &["--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["flagged"], serde_json::json!([]));
    assert_eq!(report["summary"]["calls"], 1);
}

#[test]
fn coverage_of_a_missing_or_damaged_journal_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let out = hookrt_command()
        .args(["audit", "coverage"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "hookrt: journal {}: no such file",
            missing.display()
        )),
        "{err}"
    );
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, "not a database, not at all; ".repeat(10)).unwrap();
    let out = hookrt_command()
        .args(["audit", "coverage", "--json"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("journal {}", junk.display())),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn coverage_verifies_the_trail_first_and_a_broken_one_fails_it() {
    let dir = agent();
    let file = covered(dir.path());
    let out = coverage(dir.path(), &file, &[]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.starts_with("the trail holds: entries 1 to "), "{said}");
    // The decision's event row deleted: every call still looks covered,
    // and the report says the journal is no proof of it.
    let db = dir.path().join("j.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA foreign_keys = OFF; DELETE FROM resolutions; DELETE FROM deliveries WHERE event_seq = 1; DELETE FROM events WHERE seq = 1;",
    )
    .unwrap();
    drop(c);
    let out = hookrt_command()
        .args(["audit", "coverage", "--json"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["trail_holds"], false, "{report}");
    assert!(
        report["trail_verdict"]
            .as_str()
            .unwrap()
            .contains("whose event row is gone from the journal"),
        "{report}"
    );
    let out = hookrt_command()
        .args(["audit", "coverage"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("THE TRAIL DOES NOT HOLD: "),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
