//! Signed receipts: `hookrt serve --journal J --signing-key K` answers a
//! decision asked with `?receipt=true` with a receipt signed by K (in the
//! body on `/v1/decide`, in the `hookrt-receipt` header on the Claude Code
//! route, whose body is Claude Code's), and an auditor checks it offline,
//! after the server is gone, with the public key: it holds, the journal's
//! trail records the same decision, and one changed byte breaks it.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::claude_fixture;
use crate::{Server, agent, hookrt, transcript_text};

fn run(args: &[&str]) -> Output {
    hookrt(args).output().expect("hookrt runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `hookrt journal verify --receipt R --key K [J]`.
fn check(receipt: &Path, key: &Path, journal: Option<&Path>) -> Output {
    let mut args = vec![
        "journal",
        "verify",
        "--receipt",
        receipt.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
    ];
    if let Some(j) = journal {
        args.push(j.to_str().unwrap());
    }
    run(&args)
}

#[test]
fn a_signed_receipt_is_checked_offline_after_the_server_is_gone() {
    let dir = agent();
    assert!(run(&["build", dir.to_str().unwrap()]).status.success());
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("trail.key");
    assert!(
        run(&["keygen", "--out", key.to_str().unwrap()])
            .status
            .success()
    );
    let public = keys.path().join("trail.key.pub");
    let journal = keys.path().join("journal.db");
    let server = Server::start(
        &dir,
        &[
            "--journal",
            journal.to_str().unwrap(),
            "--signing-key",
            key.to_str().unwrap(),
        ],
    );
    // A decision on /v1/decide: the receipt in the body.
    let decision = transcript_text()
        .lines()
        .find(|l| l.contains("\"kind\":\"actions.requested\""))
        .unwrap()
        .replace("\"id\":\"", "\"id\":\"receipt-");
    let reply = server.post(
        "/v1/decide?receipt=true",
        "application/json",
        decision.as_bytes(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let decided = reply.json()["signed_receipt"].clone();
    assert!(decided["signature"].is_string(), "{}", reply.body);
    // Without asking, none.
    let plain = server.post(
        "/v1/decide",
        "application/json",
        decision.replace("receipt-", "plain-").as_bytes(),
    );
    assert!(
        plain.json().get("signed_receipt").is_none(),
        "{}",
        plain.body
    );
    // Claude Code's route: the body stays Claude Code's, the receipt in a header.
    let mut pre: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
    pre["tool_input"]["command"] = "rm -rf build/".into();
    let claude = server.post(
        "/v1/claude-code?receipt=true",
        "application/json",
        pre.to_string().as_bytes(),
    );
    assert_eq!(claude.status, 200, "{}", claude.body);
    assert_eq!(
        claude.json()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let header: Value = serde_json::from_str(
        claude
            .header("hookrt-receipt")
            .expect("a hookrt-receipt header"),
    )
    .unwrap();
    let (clean, _) = server.terminate();
    assert!(clean);

    for (name, receipt) in [("decide", &decided), ("claude", &header)] {
        let file = keys.path().join(format!("{name}.json"));
        std::fs::write(&file, receipt.to_string()).unwrap();
        // Offline: the signature by the key the auditor trusts.
        let ok = check(&file, &public, None);
        assert!(ok.status.success(), "{name}: {}", text(&ok.stderr));
        assert!(text(&ok.stdout).contains("the receipt holds"), "{name}");
        // And the journal's trail records the same decision.
        let ok = check(&file, &public, Some(&journal));
        assert!(ok.status.success(), "{name}: {}", text(&ok.stderr));
        assert!(
            text(&ok.stdout).contains("recorded at entry"),
            "{name}: {}",
            text(&ok.stdout)
        );
        // One changed byte: the signature no longer holds.
        let digest = receipt["resolution_sha256"].as_str().unwrap();
        let flipped = if digest.starts_with('0') { "1" } else { "0" };
        let changed =
            receipt
                .to_string()
                .replacen(digest, &format!("{flipped}{}", &digest[1..]), 1);
        assert_ne!(changed, receipt.to_string());
        std::fs::write(&file, &changed).unwrap();
        let bad = check(&file, &public, None);
        assert_eq!(bad.status.code(), Some(1), "{name}");
        assert!(
            text(&bad.stderr).contains("it was changed after it was signed"),
            "{name}: {}",
            text(&bad.stderr)
        );
    }
    // Another key is not the one the auditor trusts.
    let other = keys.path().join("other.key");
    assert!(
        run(&["keygen", "--out", other.to_str().unwrap()])
            .status
            .success()
    );
    let file = keys.path().join("decide.json");
    std::fs::write(&file, decided.to_string()).unwrap();
    let bad = check(&file, &keys.path().join("other.key.pub"), None);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("not by the key given"));
}
