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

#[test]
fn sdk_version_newest_world_and_build_requirement_agree() {
    let root = crate::common::repo();
    let manifest = std::fs::read_to_string(root.join("guest-sdk/Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("guest-sdk/Cargo.toml states its own version");
    assert_eq!(
        version,
        hookrt::NEWEST_VERSION,
        "the SDK's version is the newest world's"
    );
    let minor = version.rsplit_once('.').unwrap().0;
    assert_eq!(
        hookrt::SDK_REQ,
        minor,
        "hooks require the SDK that builds the newest world"
    );
    let mut worlds: Vec<String> = std::fs::read_dir(root.join("wit"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_start_matches('v')
                .to_owned()
        })
        .collect();
    worlds.sort_by_key(|v| {
        v.split('.')
            .map(|n| n.parse::<u32>().unwrap())
            .collect::<Vec<_>>()
    });
    worlds.reverse();
    assert_eq!(
        worlds,
        hookrt::SUPPORTED_VERSIONS,
        "one wit/ folder per supported world"
    );
    let lib = std::fs::read_to_string(root.join("guest-sdk/src/lib.rs")).unwrap();
    assert!(
        lib.contains(&format!("path: \"wit/v{version}\"")),
        "the SDK binds the newest world"
    );
    assert!(
        root.join("guest-sdk/wit")
            .join(format!("v{version}/hook.wit"))
            .is_file(),
        "the SDK crate carries its WIT (guest-sdk/wit), so `cargo package` includes it"
    );
}
