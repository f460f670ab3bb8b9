//! `Envelope::from_json` (the JSONL input of `hookrt run`): never panics, and
//! an envelope it accepts is accepted again, unchanged, from its own JSON.
#![no_main]

use hookrt::Envelope;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(e) = Envelope::from_json(line) {
        let json = serde_json::to_string(&e).expect("an envelope serializes");
        let again = Envelope::from_json(&json).expect("an accepted envelope re-parses");
        assert_eq!(e, again);
    }
});
