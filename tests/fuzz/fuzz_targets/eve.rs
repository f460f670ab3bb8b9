//! The Eve bridge (`EveStream::envelope`, one NDJSON line at a time, state
//! kept across lines): never panics, and every envelope it makes is valid.
#![no_main]

use hookrt::event::EveStream;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut stream = EveStream::new("coder", "ses_fuzz");
    for line in text.lines() {
        if let Ok(mut e) = stream.envelope(line) {
            e.validate().expect("the Eve bridge makes valid envelopes");
        }
    }
});
