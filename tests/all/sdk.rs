//! The guest SDK and the host agree on the vocabulary and the transcript.


#[test]
fn sdk_and_runtime_share_one_vocabulary() {
    let host: Vec<&str> = hookrt::KINDS.iter().map(|k| k.name).collect();
    assert_eq!(host, hookrt_sdk::events::KINDS);
}

#[test]
fn every_transcript_event_is_valid_for_the_runtime() {
    let events = crate::common::transcript();
    assert!(events.len() >= 30);
    let mut ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "event ids are unique");
}
