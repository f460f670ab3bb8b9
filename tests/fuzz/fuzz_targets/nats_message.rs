//! What a JetStream worker takes from a message before any hook sees it:
//! its subject and payload (`hookrt_worker::accept`) and its reply header
//! (`hookrt_worker::replyable`). Never panics; an accepted envelope is valid
//! and was published on exactly its own session's subject; a reply goes only
//! to an inbox, never a KV key or a JetStream API subject.
#![no_main]

use hookrt_worker::{Names, accept, replyable};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // subject \0 reply-to \0 payload
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(subject), Some(reply), Some(payload)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let (Ok(subject), Ok(reply)) = (std::str::from_utf8(subject), std::str::from_utf8(reply)) else {
        return;
    };
    let names = Names {
        stream: "HOOKRT_EVENTS".into(),
        prefix: "hookrt.events".into(),
        durable: "hooks".into(),
        partitions: 16,
        replicas: 1,
    };
    if let Ok(mut e) = accept(&names, subject, payload) {
        e.validate().expect("an accepted message is a valid envelope");
        assert!(subject.starts_with("hookrt.events."), "{subject}");
        assert!(!subject.contains(['*', '>', ' ']), "{subject}");
    }
    if replyable(reply) {
        assert!(reply.starts_with("_INBOX."), "{reply}");
        assert!(!reply.contains(['*', '>', ' ']), "{reply}");
    }
});
