//! The Claude Code bridge (`claude_envelope`, a hook's JSON on stdin): never
//! panics, and every envelope it makes is valid.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut e) = hookrt::event::claude_envelope("coder", input) {
        e.validate().expect("the Claude bridge makes valid envelopes");
    }
});
