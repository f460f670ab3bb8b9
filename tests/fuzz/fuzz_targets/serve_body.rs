//! `hookrt serve`'s request bodies (`Streams::parse`) in each format it
//! takes: one JSON envelope or an array, NDJSON, and Eve's stream (state kept
//! across bodies), plus the one envelope of `/v1/decide` (`Streams::one`).
//! Never panics; every envelope it makes is valid; no body yields more than
//! `MAX_ITEMS` items (a larger one is refused before any is parsed).
#![no_main]

use hookrt_serve::{Format, MAX_ITEMS, Streams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let format = match which % 3 {
        0 => Format::Json,
        1 => Format::Ndjson,
        _ => Format::Eve {
            agent: "coder".into(),
            session: "ses_fuzz".into(),
            subagent: None,
        },
    };
    let streams = Streams::default();
    // Twice: the state kept across requests (ordinals, Eve streams) too.
    for _ in 0..2 {
        if let Ok(items) = streams.parse(&format, body) {
            assert!(items.len() <= MAX_ITEMS, "{} items", items.len());
            for item in items {
                if let Ok(mut e) = item.parsed {
                    e.validate().expect("serve makes valid envelopes");
                    assert_eq!(e.attempt, 1, "a caller's attempt is never kept");
                }
            }
        }
    }
    if let Ok(Ok(mut e)) = streams.one(body) {
        e.validate().expect("serve makes valid envelopes");
    }
});
