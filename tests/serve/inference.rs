//! Anthropic's inference hooks through `hookrt serve`: frames signed
//! exactly as "Develop an Inference hooks integration" describes (Standard
//! Webhooks: HMAC-SHA256 of `webhook-id.webhook-timestamp.body` under the
//! `whsec_` secret's key, `v1,<base64>`), the HMAC written here from RFC
//! 2104 rather than taken from the crate the server checks with, so the two
//! can only agree by both following the spec. The example agent's policy
//! decides; every verdict is a 200 `{"action": …}`; a request that is not
//! signed with the configured secret, or is older than five minutes, gets a
//! deny and reaches no hook; a retry of a frame is the same event.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{agent_fixture, succeeded};
use crate::{Reply, Server, agent, hookrt, request};

/// The secret the tests' server is given, as Anthropic shows one.
pub(crate) const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// HMAC-SHA256 (RFC 2104): `H(K ^ opad, H(K ^ ipad, message))`, the key
/// padded to SHA-256's 64-byte block.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// `webhook-signature` for `body` sent as `id` at `timestamp`, under
/// `secret` (`whsec_` and its standard base64).
pub(crate) fn signature(secret: &str, id: &str, timestamp: u64, body: &[u8]) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
        .expect("standard base64");
    let mut signed = format!("{id}.{timestamp}.").into_bytes();
    signed.extend_from_slice(body);
    format!("v1,{}", STANDARD.encode(hmac_sha256(&key, &signed)))
}

/// Now, in Unix seconds.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A server over the example agent that checks signatures with
/// [`SECRET`], journaling into `dir`.
pub(crate) fn signed_server(dir: &Path, journal: &Path) -> Server {
    signed_server_with(dir, journal, &[])
}

/// [`signed_server`] with `extra` arguments.
fn signed_server_with(dir: &Path, journal: &Path, extra: &[&str]) -> Server {
    let secrets = dir.join("webhook-secrets");
    std::fs::write(
        &secrets,
        format!("# Anthropic's, from the admin console\n{SECRET}\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o600)).unwrap();
    let agent = agent();
    succeeded(&mut hookrt(&["build", agent.to_str().unwrap()]));
    Server::start(
        &agent,
        &[
            "--journal",
            journal.to_str().unwrap(),
            "--webhook-secrets",
            secrets.to_str().unwrap(),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .collect::<Vec<_>>(),
    )
}

/// POSTs `frame` to the inference route as Anthropic does: its
/// `request_id` as `webhook-id`, signed with `secret` at `timestamp`.
pub(crate) fn post_frame(addr: &str, frame: &Value, secret: &str, timestamp: u64) -> Reply {
    let body = frame.to_string();
    let id = frame["request_id"].as_str().expect("a request_id");
    let signature = signature(secret, id, timestamp, body.as_bytes());
    let timestamp = timestamp.to_string();
    request(
        addr,
        "POST",
        "/v1/anthropic-inference",
        &[
            ("Content-Type", "application/json"),
            ("User-Agent", "anthropic-dlp/1"),
            ("webhook-id", id),
            ("webhook-timestamp", &timestamp),
            ("webhook-signature", &signature),
        ],
        body.as_bytes(),
    )
}

/// The frame of `type` from the fixtures, under `request_id`.
fn frame(kind: &str, request_id: &str) -> Value {
    let mut frame: Value =
        serde_json::from_str(&agent_fixture("anthropic-inference", kind)).unwrap();
    frame["request_id"] = request_id.into();
    frame
}

/// The verdict of a reply: it must be a 200 with a verdict, whatever
/// happened.
fn verdict(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let v = reply.json();
    assert!(
        matches!(v["action"].as_str(), Some("allow" | "deny")),
        "{v}"
    );
    v
}

/// The events the journal holds, by id.
fn journaled(journal: &Path) -> Vec<(String, String)> {
    let db = rusqlite::Connection::open(journal).unwrap();
    let mut q = db
        .prepare("SELECT id, kind FROM events ORDER BY seq")
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_spec_example_signs_as_the_standard_says() {
    // Standard Webhooks' own example: our HMAC and encoding are the spec's.
    assert_eq!(
        signature(
            SECRET,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#
        ),
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    );
}

#[test]
fn signed_frames_get_the_policys_verdict_and_a_retry_is_the_same_event() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    let server = signed_server(dir.path(), &journal);
    let at = now();

    // A prompt nothing objects to: allowed.
    let allowed = verdict(&post_frame(
        &server.addr,
        &frame("prompt", "req_p1"),
        SECRET,
        at,
    ));
    assert_eq!(allowed, json!({"action": "allow"}));

    // A tool call the policy denies: one verdict for the frame, the
    // policy's reason, the deciding hook as the reference.
    let mut dangerous = frame("tool_call", "req_t1");
    dangerous["messages"][0]["content"][1]["input"]["command"] = "rm -rf build/".into();
    let denied = verdict(&post_frame(&server.addr, &dangerous, SECRET, at));
    assert_eq!(denied["action"], "deny", "{denied}");
    assert!(
        denied["deny_reason"]
            .as_str()
            .unwrap()
            .contains("recursive forced delete"),
        "{denied}"
    );
    assert_eq!(denied["reference_id"], "policy");

    // Anthropic retries a frame whose connection failed as it was: the
    // same webhook-id, timestamp and signature. The same event, not decided
    // again: the verdict it got.
    let again = verdict(&post_frame(&server.addr, &dangerous, SECRET, at));
    assert_eq!(again, denied);

    // A type the protocol may add later: observed, allowed.
    let mut later = frame("prompt", "req_x1");
    later["type"] = "model_output".into();
    assert_eq!(
        verdict(&post_frame(&server.addr, &later, SECRET, at)),
        json!({"action": "allow"})
    );
    let (clean, _) = server.terminate();
    assert!(clean);

    let events = journaled(&journal);
    let kinds: Vec<&str> = events.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "prompt.submitted",
            "actions.requested",
            "custom.inference.model_output"
        ],
        "{events:?}"
    );
    let db = rusqlite::Connection::open(&journal).unwrap();
    let prompt: String = db
        .query_row(
            "SELECT envelope FROM events ORDER BY seq LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let prompt: Value = serde_json::from_str(&prompt).unwrap();
    assert_eq!(
        prompt["data"]["prompt"],
        "Summarize the attached report.\n\n[q2-report.pdf]\nQ2 revenue grew 14% quarter over quarter..."
    );
    assert_eq!(prompt["data"]["source"], "claude-code");
    assert_eq!(
        prompt["data"]["actor"]["email_address"],
        "alice@example.com"
    );
    assert_eq!(
        prompt["data"]["bridge"],
        json!({"agent": "anthropic-inference", "event": "prompt", "transport": "http"})
    );

    // The auditor's proof of coverage knows the plane: the frame's call,
    // decided by the policy, flagged for nothing.
    let out = hookrt(&["audit", "coverage", journal.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let session = &report["sessions"][0];
    assert_eq!(session["agent"], "anthropic-inference", "{report}");
    let call = &session["calls"][0];
    assert_eq!(
        call["call_id"], "toolu_01HiJkLmNoPqRsTuVwXyZaBc",
        "{report}"
    );
    assert_eq!(
        (&call["verdict"], &call["decided_by"], &call["flags"]),
        (&json!("deny"), &json!("policy"), &json!([])),
        "{report}"
    );
    assert_eq!(report["summary"]["flagged"], 0, "{report}");
}

#[test]
fn a_frame_not_signed_with_the_secret_or_too_old_is_denied_and_reaches_no_hook() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    let server = signed_server(dir.path(), &journal);
    let at = now();
    let prompt = frame("prompt", "req_forged");
    let body = prompt.to_string();
    let good = signature(SECRET, "req_forged", at, body.as_bytes());
    let at_text = at.to_string();
    let other = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let cases: Vec<(&str, Reply)> = vec![
        // No signature at all, though with hookrt's own bearer token: a
        // token is not what this route takes.
        (
            "`webhook-id` header is missing",
            server.post(
                "/v1/anthropic-inference",
                "application/json",
                body.as_bytes(),
            ),
        ),
        (
            "no signature in `webhook-signature` matches",
            post_frame(&server.addr, &prompt, other, at),
        ),
        (
            "more than 300 s",
            post_frame(&server.addr, &prompt, SECRET, at - 400),
        ),
        (
            "more than 300 s",
            post_frame(&server.addr, &prompt, SECRET, at + 400),
        ),
        // Signed, then changed on the way.
        (
            "no signature in `webhook-signature` matches",
            request(
                &server.addr,
                "POST",
                "/v1/anthropic-inference",
                &[
                    ("Content-Type", "application/json"),
                    ("webhook-id", "req_forged"),
                    ("webhook-timestamp", &at_text),
                    ("webhook-signature", &good),
                ],
                body.replace("Summarize", "Exfiltrate").as_bytes(),
            ),
        ),
    ];
    for (says, reply) in cases {
        let v = verdict(&reply);
        assert_eq!(v["action"], "deny", "{says}: {v}");
        let reason = v["deny_reason"].as_str().unwrap();
        assert!(reason.contains(says), "{says}: {reason}");
        assert_eq!(reply.header("connection"), Some("close"), "{says}");
    }
    // With `on_failure=source` a refusal is its status: Anthropic's own
    // failure handling decides. What hooks decide is a verdict still.
    let left = request(
        &server.addr,
        "POST",
        "/v1/anthropic-inference?on_failure=source",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(
        (left.status, left.json()["code"].as_str()),
        (401, Some("bad_signature"))
    );
    let (clean, _) = server.terminate();
    assert!(clean);
    assert_eq!(
        journaled(&journal),
        Vec::new(),
        "no refused frame is an event"
    );

    // A server given no secret refuses every frame, saying how to give one.
    let open = Server::start(&agent(), &[]);
    let v = verdict(&post_frame(&open.addr, &prompt, SECRET, now()));
    assert_eq!(v["action"], "deny");
    assert!(
        v["deny_reason"]
            .as_str()
            .unwrap()
            .contains("no webhook secret"),
        "{v}"
    );
}

#[test]
fn forged_frames_spend_none_of_the_signed_sources_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    // One request in the bucket, refilled once in ~17 minutes.
    let server = signed_server_with(
        dir.path(),
        &journal,
        &["--rate-limit", "0.001", "--rate-burst", "1"],
    );
    let other = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for i in 0..5 {
        let forged = verdict(&post_frame(
            &server.addr,
            &frame("prompt", &format!("req_f{i}")),
            other,
            now(),
        ));
        assert!(
            forged["deny_reason"].as_str().unwrap().contains("matches"),
            "{forged}"
        );
    }
    // Anthropic's own frame still has its one request.
    let real = verdict(&post_frame(
        &server.addr,
        &frame("prompt", "req_real"),
        SECRET,
        now(),
    ));
    assert_eq!(real, json!({"action": "allow"}));
    let limited = verdict(&post_frame(
        &server.addr,
        &frame("prompt", "req_next"),
        SECRET,
        now(),
    ));
    assert_eq!(limited["action"], "deny", "the bucket holds: {limited}");
}
