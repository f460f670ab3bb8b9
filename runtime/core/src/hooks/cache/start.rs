//! Start records: the subscriptions a hook reported when it started at load
//! (instantiated, configured, asked), kept in the cache so that the next load
//! of the same component with the same configuration need not start it again.
//!
//! A hook's subscriptions are a function of its component and its
//! configuration: at load it runs on a throw-away state store, with no HTTP
//! allowed, and what it logs or counts there is dropped. So a record is keyed
//! by everything the start depends on: hookrt's version, the engine's
//! compatibility hash, the component's digest, the world version it was
//! linked against, the hook's id, its `config`, its grants and its limits.
//! Only a start that succeeded, with subscriptions that passed every check,
//! is recorded; a hook whose start failed is started (and reported) again on
//! every load. Records carry an HMAC under the cache's private key: a planted
//! or edited record is ignored, and the hook is started as if there were none.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::hooks::cache::dir;

/// Folder under the cache dir holding start records.
pub(crate) const STARTS_DIR: &str = "starts";

/// What a hook's start depends on.
pub(crate) struct StartKey {
    material: Vec<u8>,
}

impl StartKey {
    /// The key of a start of `component_sha256` (linked as `world_version`)
    /// as the hook `id`, with `config_json`, `grants` and `limits` (any
    /// `Debug` form that changes when they do).
    pub(crate) fn new(
        engine_id: &[u8],
        component_sha256: &str,
        world_version: &str,
        id: &str,
        config_json: &str,
        grants: &[&str],
        limits: &impl std::fmt::Debug,
    ) -> StartKey {
        let mut material = Vec::new();
        for part in [
            b"hookrt start v1".as_slice(),
            env!("CARGO_PKG_VERSION").as_bytes(),
            engine_id,
            component_sha256.as_bytes(),
            world_version.as_bytes(),
            id.as_bytes(),
            config_json.as_bytes(),
            grants.join(",").as_bytes(),
            format!("{limits:?}").as_bytes(),
        ] {
            material.extend_from_slice(&(part.len() as u64).to_le_bytes());
            material.extend_from_slice(part);
        }
        StartKey { material }
    }

    fn path(&self, cache_dir: &Path) -> PathBuf {
        cache_dir
            .join(STARTS_DIR)
            .join(hex::encode(Sha256::digest(&self.material)))
    }

    fn mac(&self, key: &[u8], subscriptions: &str) -> [u8; 32] {
        dir::hmac_sha256(key, &[&self.material, b"\0", subscriptions.as_bytes()])
    }
}

/// The subscriptions recorded for `start` in the cache of `cache_dir` (MAC
/// key `key`), if a record with a valid MAC is there.
pub(crate) fn recall(cache_dir: &Path, key: &[u8], start: &StartKey) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(start.path(cache_dir)).ok()?;
    let (mac, subscriptions) = text.split_once('\n')?;
    let mac = hex::decode(mac).ok()?;
    if !dir::same_mac(&mac, &start.mac(key, subscriptions)) {
        tracing::warn!(record = %start.path(cache_dir).display(), "start record has no valid MAC (planted, foreign or damaged); the hook is started again");
        return None;
    }
    serde_json::from_str(subscriptions).ok()
}

/// Records `subscriptions` for `start` in the cache of `cache_dir` (MAC key
/// `key`; best effort: without a record the next load starts the hook again).
pub(crate) fn remember(cache_dir: &Path, key: &[u8], start: &StartKey, subscriptions: &[String]) {
    let json = serde_json::to_string(subscriptions).unwrap_or_default();
    let path = start.path(cache_dir);
    let text = format!("{}\n{json}", hex::encode(start.mac(key, &json)));
    let written = dir::create_private_dir(&cache_dir.join(STARTS_DIR))
        .and_then(|()| dir::write_private(&path, text.as_bytes()));
    if let Err(e) = written {
        tracing::debug!(record = %path.display(), "cannot write start record: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(config: &str) -> StartKey {
        StartKey::new(
            b"engine",
            "abc",
            "0.2.0",
            "audit",
            config,
            &["log"],
            &(1, 2),
        )
    }

    /// The cache's MAC key in these tests.
    const MAC_KEY: [u8; 32] = [7; 32];

    #[test]
    fn a_record_is_recalled_for_the_same_start_only_and_a_forged_one_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let subs = vec!["session.started".to_owned(), "*".to_owned()];
        remember(dir.path(), &MAC_KEY, &key("{}"), &subs);
        assert_eq!(recall(dir.path(), &MAC_KEY, &key("{}")), Some(subs));
        assert_eq!(
            recall(dir.path(), &MAC_KEY, &key("{\"x\":1}")),
            None,
            "another config"
        );
        let other = StartKey::new(b"engine", "abc", "0.2.0", "audit", "{}", &["log"], &(1, 3));
        assert_eq!(recall(dir.path(), &MAC_KEY, &other), None, "other limits");

        // Edited subscriptions under the old MAC: ignored.
        let path = key("{}").path(dir.path());
        let text = std::fs::read_to_string(&path).unwrap();
        let (mac, _) = text.split_once('\n').unwrap();
        std::fs::write(&path, format!("{mac}\n[\"*\"]")).unwrap();
        assert_eq!(recall(dir.path(), &MAC_KEY, &key("{}")), None);
    }
}
