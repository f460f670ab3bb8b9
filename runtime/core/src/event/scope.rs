//! Scopes: whose events a hook receives, and how events reach hookrt.
//!
//! Primary hooks (`hooks/`) receive primary-agent events only; a subagent's
//! hooks (`subagents/<id>/hooks/`) receive that subagent's events only; an
//! aggregate observer named in `hookrt.toml` receives every scope's events
//! with ids kept and `data` removed. Parents never see a subagent's payloads.

/// Whose events a hook receives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "scope", content = "id", rename_all = "snake_case")]
pub enum Scope {
    /// The primary agent's hooks.
    Primary,
    /// The hooks of subagent `id`.
    Subagent(String),
    /// An aggregate observer: every scope, without data.
    Aggregate,
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Primary => f.write_str("primary"),
            Scope::Subagent(id) => write!(f, "subagent:{id}"),
            Scope::Aggregate => f.write_str("aggregate"),
        }
    }
}

impl Scope {
    /// The scope of an event: its subagent's, or the primary agent's.
    pub(crate) fn of_event(subagent: Option<&str>) -> Scope {
        subagent.map_or(Scope::Primary, |id| Scope::Subagent(id.to_owned()))
    }

    /// A hook's id across scopes: its slug for primary hooks (and aggregate
    /// observers, which live in `hooks/`), `subagents/<id>/<slug>` otherwise.
    pub(crate) fn hook_id(&self, slug: &str) -> String {
        match self {
            Scope::Subagent(id) => format!("subagents/{id}/{slug}"),
            _ => slug.to_owned(),
        }
    }

    /// The `hookrt.toml` table that configures a hook, for messages.
    pub(crate) fn config_table(&self, slug: &str) -> String {
        match self {
            Scope::Subagent(id) => format!("subagents.\"{id}\".hooks.\"{slug}\""),
            _ => format!("hooks.\"{slug}\""),
        }
    }
}

/// How events reach hookrt: a description handed to hooks, never a channel.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Transport {
    /// `in-process`, `cli`, `http`, `nats`, ...
    pub kind: String,
    /// Non-secret detail (e.g. a NATS subject).
    pub detail: Option<String>,
}

impl Default for Transport {
    fn default() -> Self {
        Transport {
            kind: "in-process".into(),
            detail: None,
        }
    }
}
