//! Hook settings: what `hookrt.toml` sets for one hook (limits, instance
//! policy, retries, failure policy, grants), with the defaults and bounds.
//! Parsing and checking the file is `config`'s job; every layer above reads
//! these types.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::sandbox::grant::{self, GrantTable};
use crate::sandbox::grants;
use crate::sandbox::limits::{self, Limits};

/// Whether a hook keeps its instance between deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstancePolicy {
    /// A fresh store and instance for every delivery: no state leaks between events.
    #[default]
    Fresh,
    /// Keep the instance warm until it fails (trap, timeout, fuel, memory); a
    /// failed instance is always discarded.
    Reuse,
}

/// Everything `hookrt.toml` sets for one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookSettings {
    /// Limits per delivery.
    pub limits: Limits,
    /// Instance reuse policy.
    pub instance: InstancePolicy,
    /// Under `reuse`: deliveries one instance serves before a fresh one
    /// replaces it (bounds what a guest can accumulate or leak).
    pub reuse_limit: u64,
    /// A critical hook's final failure fails the turn (see `cascade`); an
    /// optional hook's is only recorded.
    pub critical: bool,
    /// How failed deliveries are retried before they are dead-lettered.
    pub retry: RetryPolicy,
    /// What a failed decision delivery counts as (the plain `on_failure =
    /// "deny"`), for every kind [`HookSettings::on_failure_by_kind`] does not name.
    pub on_failure: OnFailure,
    /// Whether `hookrt.toml` set the plain `on_failure` (for this hook or in
    /// `[defaults]`), rather than leaving the fail-closed default: `check`
    /// and `audit` warn about a voting hook that fails closed by default only.
    pub on_failure_chosen: bool,
    /// `on_failure` per subscription (`on_failure = { "actions.requested" =
    /// "deny", "prompt.submitted" = "abstain" }`): what a failure of the
    /// hook's vote on that kind counts as. Empty unless written, so a lock
    /// of a hook without it pins the same settings as before.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub on_failure_by_kind: BTreeMap<String, OnFailure>,
    /// A human name for the hook (audit only).
    pub name: Option<String>,
    /// What the hook is for (audit only).
    pub description: Option<String>,
    /// The `config` table handed to the hook's `configure` export, as JSON.
    pub config: serde_json::Map<String, serde_json::Value>,
    /// Capabilities it may import (`log` unless set).
    pub grants: BTreeSet<String>,
    /// With the `http` grant: the hosts (`host` or `host:port`) it may call.
    pub http_allow: Vec<String>,
    /// The tables of the grants that take settings (`exec`), by grant.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub grant_tables: BTreeMap<String, GrantTable>,
}

/// What a decision hook's failed delivery (error, trap, timeout, fuel, memory)
/// counts as. Never `allow`: a broken policy hook cannot open the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Fail closed (the default): the failure is a deny (tool approval) or a
    /// failed edit (file-edit ownership), marked as a failure, not a normal answer.
    #[default]
    Deny,
    /// Fail open: the failure counts as abstain / not-handled.
    Abstain,
}

impl HookSettings {
    /// What a failure of the hook's vote on `kind` counts as, and whether
    /// `hookrt.toml` chose it (per subscription, or the plain `on_failure`).
    pub(crate) fn on_failure_for(&self, kind: &str) -> (OnFailure, bool) {
        match self.on_failure_by_kind.get(kind) {
            Some(f) => (*f, true),
            None => (self.on_failure, self.on_failure_chosen),
        }
    }
}

/// `on_failure` as written: one policy for the hook, or one per subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnFailureSetting {
    /// `on_failure = "deny"`: every vote of the hook.
    Plain(OnFailure),
    /// `on_failure = { "<kind>" = "deny", ... }`: the votes on the kinds named.
    ByKind(BTreeMap<String, OnFailure>),
}

impl OnFailureSetting {
    /// Sets it in `s`: a table over what `[defaults]` set, kind by kind.
    pub(crate) fn apply(&self, s: &mut HookSettings) {
        match self {
            OnFailureSetting::Plain(v) => {
                s.on_failure = *v;
                s.on_failure_chosen = true;
            }
            OnFailureSetting::ByKind(by) => s.on_failure_by_kind.extend(by.clone()),
        }
    }
}

impl<'de> Deserialize<'de> for OnFailureSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = OnFailureSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"deny\", \"abstain\", or a table of decision or gate kinds to \"deny\" or \"abstain\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                OnFailure::deserialize(serde::de::value::StrDeserializer::new(v))
                    .map(OnFailureSetting::Plain)
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut m: M,
            ) -> Result<Self::Value, M::Error> {
                let mut by = BTreeMap::new();
                while let Some((kind, f)) = m.next_entry::<String, OnFailure>()? {
                    if !votes_on(&kind) {
                        return Err(serde::de::Error::custom(format!(
                            "`on_failure` names `{kind}`, which is no decision or gate kind a hook votes on by name \
                             (one of {}); a `*` or `observe:` handler's failure counts for nothing either way",
                            crate::event::kind::KINDS
                                .iter()
                                .map(|k| k.name)
                                .filter(|k| votes_on(k))
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    }
                    by.insert(kind, f);
                }
                Ok(OnFailureSetting::ByKind(by))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Whether a hook subscribed to `kind` by name votes on it (a decision or gate).
fn votes_on(kind: &str) -> bool {
    use crate::event::kind::{EventClass, class_of, is_known};
    is_known(kind) && matches!(class_of(kind), EventClass::Decision | EventClass::Gate)
}

impl Default for HookSettings {
    fn default() -> Self {
        HookSettings {
            limits: Limits::default(),
            instance: InstancePolicy::default(),
            reuse_limit: DEFAULT_REUSE_LIMIT,
            critical: false,
            retry: RetryPolicy::default(),
            on_failure: OnFailure::default(),
            on_failure_chosen: false,
            on_failure_by_kind: BTreeMap::new(),
            name: None,
            description: None,
            config: serde_json::Map::new(),
            grants: grants::DEFAULT_GRANTS
                .iter()
                .map(|g| g.to_string())
                .collect(),
            http_allow: Vec::new(),
            grant_tables: BTreeMap::new(),
        }
    }
}

/// Retries of a failed delivery: `max_attempts` in all (1 = no retry), waiting
/// `backoff_ms`, doubled after each attempt, between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RetryPolicy {
    /// Attempts in all, including the first.
    pub max_attempts: u32,
    /// Wait before the second attempt, in milliseconds.
    pub backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 1,
            backoff_ms: 100,
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `next` (2 or more).
    pub(crate) fn backoff(&self, next: u32) -> std::time::Duration {
        let doublings = next.saturating_sub(2).min(16);
        std::time::Duration::from_millis(
            self.backoff_ms
                .saturating_mul(1 << doublings)
                .min(MAX_BACKOFF_MS),
        )
    }
}

/// Longest wait between two attempts: retries run in order with the hook's
/// other deliveries, so a long wait holds up every later event.
pub(crate) const MAX_BACKOFF_MS: u64 = 60_000;
/// Most attempts a delivery may get.
pub(crate) const MAX_ATTEMPTS: u64 = 20;
/// Deliveries a warm (`reuse`) instance serves before it is replaced.
pub(crate) const DEFAULT_REUSE_LIMIT: u64 = 10_000;
/// Highest `reuse_limit` accepted.
pub(crate) const MAX_REUSE_LIMIT: u64 = 1_000_000_000;

/// One table of per-hook keys, as written (`[defaults]` or `[hooks."slug"]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSettings {
    pub(crate) metering: Option<limits::Metering>,
    pub(crate) fuel: Option<u64>,
    pub(crate) deadline_ms: Option<u64>,
    pub(crate) memory_mib: Option<u64>,
    pub(crate) table_elements: Option<u64>,
    pub(crate) instances: Option<u64>,
    pub(crate) tables: Option<u64>,
    pub(crate) memories: Option<u64>,
    pub(crate) output_bytes: Option<u64>,
    pub(crate) log_bytes_per_minute: Option<u64>,
    pub(crate) instance: Option<InstancePolicy>,
    pub(crate) reuse_limit: Option<u64>,
    pub(crate) critical: Option<bool>,
    pub(crate) max_attempts: Option<u64>,
    pub(crate) backoff_ms: Option<u64>,
    pub(crate) on_failure: Option<OnFailureSetting>,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) config: Option<toml::Table>,
    pub(crate) grants: Option<grant::Declared>,
    pub(crate) http_allow: Option<Vec<String>>,
}

/// Sets in `s` what `raw` writes, key by key.
pub(crate) fn apply(s: &mut HookSettings, raw: &RawSettings) {
    let l = &mut s.limits;
    if let Some(v) = raw.metering {
        l.metering = v
    }
    if let Some(v) = raw.fuel {
        l.fuel = v
    }
    if let Some(v) = raw.deadline_ms {
        l.deadline_ms = v
    }
    if let Some(v) = raw.memory_mib {
        l.memory_bytes = v << 20
    }
    if let Some(v) = raw.table_elements {
        l.table_elements = v
    }
    if let Some(v) = raw.instances {
        l.instances = v
    }
    if let Some(v) = raw.tables {
        l.tables = v
    }
    if let Some(v) = raw.memories {
        l.memories = v
    }
    if let Some(v) = raw.output_bytes {
        l.output_bytes = v
    }
    if let Some(v) = raw.log_bytes_per_minute {
        l.log_bytes_per_minute = v
    }
    if let Some(v) = raw.instance {
        s.instance = v
    }
    if let Some(v) = raw.reuse_limit {
        s.reuse_limit = v
    }
    if let Some(v) = raw.critical {
        s.critical = v
    }
    if let Some(v) = raw.max_attempts {
        s.retry.max_attempts = v as u32
    }
    if let Some(v) = raw.backoff_ms {
        s.retry.backoff_ms = v
    }
    if let Some(v) = &raw.on_failure {
        v.apply(s);
    }
    if let Some(v) = &raw.name {
        s.name = Some(v.clone())
    }
    if let Some(v) = &raw.description {
        s.description = Some(v.clone())
    }
    if let Some(v) = &raw.grants {
        s.grants = v.names();
        s.grant_tables = v.read("").0;
    }
    if let Some(v) = &raw.http_allow {
        s.http_allow = v.clone();
    }
    if let Some(v) = &raw.config {
        // A TOML table always has a JSON form (datetimes become strings).
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(v) {
            s.config = map;
        }
    }
}
