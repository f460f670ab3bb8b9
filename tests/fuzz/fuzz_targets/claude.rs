//! The agents' bridges (`Bridge::read`, an agent's hook JSON on stdin; the
//! target keeps its first name, `claude`, and its corpus): never panic, and
//! every envelope they make is valid, for every agent.
#![no_main]

use hookrt::front::bridge::Bridge;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    for bridge in Bridge::ALL {
        if let Ok(mut e) = bridge.read("coder", input, Some("preToolUse"), "command") {
            e.envelope
                .validate()
                .expect("the agents' bridges make valid envelopes");
        }
    }
});
