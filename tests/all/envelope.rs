//! Envelopes: validation errors name what is wrong; keys derive from coordinates.

use hookrt::Envelope;

const GOOD: &str = r#"{"schema_version":1,"id":"e1","kind":"message.completed","timestamp":"2026-11-30T09:00:00.000Z","coordinates":{"agent":"coder","session":"s1","turn":"t1","step":"t1.s1","sequence":5,"subagent":null},"data":{"message_id":"m1"}}"#;

fn err(line: &str) -> String {
    Envelope::from_json(line).expect_err("invalid").to_string()
}

#[test]
fn valid_envelope_gets_attempt_one_and_a_derived_key() {
    let e = Envelope::from_json(GOOD).unwrap();
    assert_eq!(e.attempt, 1);
    // Computed independently from docs/envelope.md's recipe (sha256 over the
    // tagged, length-prefixed coordinates and kind, then sequence 5 as u64 LE),
    // so a change to the derivation breaks this test, not just both sides.
    assert_eq!(e.idempotency_key, "ik1-e22542c6537d39db9810ea66fa6877f3");
    assert_eq!(
        hookrt::event::idempotency_key("message.completed", &e.coordinates),
        e.idempotency_key
    );
}

#[test]
fn an_envelope_reads_back_from_its_own_json_unchanged_even_with_long_numbers() {
    // Found by `scripts/fuzz envelope`: without serde_json's `float_roundtrip`,
    // a number with many digits came back one ulp off from the JSON hookrt
    // wrote itself (the journal), so a redelivery saw other data.
    let line = GOOD.replace(
        r#"{"message_id":"m1"}"#,
        &format!(
            r#"{{"tokens":19030{}{}{}}}"#,
            "4".repeat(30),
            "7".repeat(100),
            "4".repeat(52)
        ),
    );
    let e = Envelope::from_json(&line).unwrap();
    let again = Envelope::from_json(&serde_json::to_string(&e).unwrap()).unwrap();
    assert_eq!(e, again);
}

#[test]
fn each_malformed_envelope_says_what_is_wrong() {
    assert!(err("{not json").starts_with("not a valid envelope: key must be a string"));
    assert!(
        err(&GOOD.replace(r#""kind":"message.completed","#, "")).contains("missing field `kind`")
    );
    assert!(
        err(&GOOD.replace(r#""id":"e1""#, r#""id":"e1","extra":1"#))
            .contains("unknown field `extra`")
    );
    assert_eq!(
        err(&GOOD.replace("message.completed", "mesage.completed")),
        "unknown event kind `mesage.completed` (did you mean `message.completed`?)"
    );
    assert_eq!(
        err(&GOOD.replace("\"schema_version\":1", "\"schema_version\":2")),
        "schema_version 2 is not supported (this runtime reads version 1)"
    );
    assert_eq!(
        err(&GOOD.replace("2026-11-30T09:00:00.000Z", "yesterday")),
        "timestamp `yesterday` is not RFC 3339 (e.g. 2026-11-30T09:00:00Z or 2026-11-30T10:00:00.5+01:00)"
    );
    assert_eq!(
        err(&GOOD.replace(r#"{"message_id":"m1"}"#, "[1]")),
        "data must be a JSON object"
    );
    assert_eq!(
        err(&GOOD.replace(r#""id":"e1""#, r#""id":"""#)),
        "`id` must be 1 to 256 bytes"
    );
    for attempt in ["0", "10001", "4294967295"] {
        assert_eq!(
            err(&GOOD.replace(r#""data""#, &format!(r#""attempt":{attempt},"data""#))),
            "attempt must be at least 1 and at most 10000",
            "{attempt}"
        );
    }
    assert!(
        err(&GOOD.replace(r#""data""#, r#""idempotency_key":"mine","data""#))
            .starts_with("idempotency_key `mine` does not match")
    );
}

#[test]
fn custom_kinds_are_accepted() {
    assert!(
        Envelope::from_json(&GOOD.replace("message.completed", "custom.deploy.finished")).is_ok()
    );
}

#[test]
fn a_refused_envelope_names_the_field_it_is_about() {
    let line = |coordinates: &str, data: &str| {
        format!(
            r#"{{"schema_version":1,"id":"e1","kind":"session.started","timestamp":"2026-11-30T09:00:00Z","coordinates":{coordinates},"data":{data}}}"#
        )
    };
    let ok = r#"{"agent":"a","session":"s","sequence":0}"#;
    let field = |text: &str| {
        let e = Envelope::from_json(text).expect_err("refused");
        (e.field().map(str::to_owned), e.to_string())
    };
    let (f, msg) = field(&line(r#"{"agent":"a","session":"s","sequence":"x"}"#, "{}"));
    assert_eq!(f.as_deref(), Some("coordinates.sequence"));
    assert!(
        msg.starts_with(
            "not a valid envelope: `coordinates.sequence`: invalid type: string \"x\", expected u64 at line 1 column "
        ),
        "{msg}"
    );
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let (f, msg) = field(&line(ok, &deep));
    assert_eq!(f.as_deref(), Some("data"));
    assert!(msg.contains("nested more than 128 levels deep"), "{msg}");
    // Syntax errors and missing fields have no field path: serde_json's words.
    let (f, msg) = field("{\"schema_version\":1,");
    assert_eq!(
        (
            f,
            msg.starts_with("not a valid envelope: EOF while parsing")
        ),
        (None, true)
    );
    let (f, _) = field(&line(ok, "[]"));
    assert_eq!(f.as_deref(), Some("data"));
    let (f, msg) = field(&line(ok, "{}").replace("session.started", "session.begun"));
    assert_eq!(f.as_deref(), Some("kind"), "{msg}");
}

#[test]
fn an_unknown_field_is_named_where_it_is() {
    let top = err(&GOOD.replace(r#""id":"e1""#, r#""id":"e1","extra":1"#));
    assert!(
        top.starts_with("not a valid envelope: unknown field `extra`, expected one of"),
        "{top}"
    );
    let inner = err(&GOOD.replace(r#""sequence":5"#, r#""sequence":5,"seq":6"#));
    assert!(
        inner.starts_with(
            "not a valid envelope: `coordinates`: unknown field `seq`, expected one of"
        ),
        "{inner}"
    );
}

#[test]
fn ordinals_forget_a_session_once_it_ends() {
    let mut ordinals = hookrt::event::Ordinals::new();
    for copy in 0..3 {
        for mut e in crate::common::transcript() {
            e.coordinates.session = format!("s{copy}");
            e.coordinates.ordinal = None;
            ordinals.assign(&mut e);
        }
        // session.completed ends it: nothing of it stays counted.
        assert_eq!(ordinals.open(), 0, "after session s{copy}");
    }
}

#[test]
fn an_envelope_already_parsed_is_checked_and_named_the_same_way() {
    let mut v: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    assert_eq!(
        Envelope::from_value(v.clone()).unwrap(),
        Envelope::from_json(GOOD).unwrap()
    );
    v["coordinates"]["sequence"] = "x".into();
    let e = Envelope::from_value(v).expect_err("refused");
    assert_eq!(e.field(), Some("coordinates.sequence"));
    assert_eq!(
        e.to_string(),
        "not a valid envelope: `coordinates.sequence`: invalid type: string \"x\", expected u64"
    );
}
