//! Audit: what each hook is and what binds it, for auditors.
//!
//! The report is built from the loaded runtime (real components, real
//! configuration), never from declarations a hook could misstate.

use std::fmt::Write as _;

use crate::WORLD;
use crate::event::kind::{EventClass, WILDCARD, class_of};
use crate::hooks::folder::discovery::SourceKind;
use crate::hooks::folder::settings::{InstancePolicy, OnFailure, RetryPolicy};
use crate::hooks::loaded::lock::{Lock, LockStatus};
use crate::runtime::Runtime;
use crate::sandbox::limits::{Limits, Metering};

/// [`HookAudit::may`] as JSON: each grant's key and its lines.
fn may_map<S: serde::Serializer>(
    may: &[(&'static str, &'static str, Vec<String>)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(may.len()))?;
    for (key, _, lines) in may {
        map.serialize_entry(key, lines)?;
    }
    map.end()
}

/// One hook as an auditor sees it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookAudit {
    /// Position in registration order (1-based).
    pub position: usize,
    /// The slug.
    pub slug: String,
    /// Source kind.
    pub source_kind: SourceKind,
    /// Source path.
    pub source: String,
    /// sha256 of what the component was built from (for `.wasm`, the file).
    pub source_sha256: String,
    /// sha256 of the component that runs.
    pub component_sha256: String,
    /// The world and version it implements.
    pub world: String,
    /// Its name and description from `hookrt.toml`.
    pub name: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its subscriptions, each with the class of events it receives.
    pub subscriptions: Vec<Subscription>,
    /// Its scope.
    pub scope: crate::event::scope::Scope,
    /// What its author should look at ([`author_warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Every interface it imports, what each needs, and whether it is granted.
    pub imports: Vec<crate::sandbox::grants::ImportAudit>,
    /// The capabilities `hookrt.toml` grants it.
    pub grants: Vec<String>,
    /// What each grant it holds lets it do, as the grant says it
    /// (`may_run`, `may_read`, ...: the grant's key, its text label, one line
    /// each), in the registry's order.
    #[serde(flatten, serialize_with = "may_map")]
    pub may: Vec<(&'static str, &'static str, Vec<String>)>,
    /// The limits in force per delivery.
    pub limits: Limits,
    /// Instance policy.
    pub instance: InstancePolicy,
    /// Under `reuse`: deliveries per instance before a fresh one replaces it.
    pub reuse_limit: u64,
    /// Whether its final failure fails the turn (`critical`) or is only recorded.
    pub critical: bool,
    /// Attempts in all and the first backoff.
    pub retry: RetryPolicy,
    /// What a failed decision delivery counts as.
    pub on_failure: OnFailure,
    /// What a failed vote counts as, per subscription, where `hookrt.toml`
    /// says so (`on_failure = { "<kind>" = ... }`); the rest count as `on_failure`.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub on_failure_by_kind: std::collections::BTreeMap<String, OnFailure>,
    /// The keys of the `config` table handed to it.
    pub config_keys: Vec<String>,
    /// Where it stands against `hookrt.lock`.
    pub lock: LockStatus,
    /// Why it drifted, when it did.
    pub lock_detail: Option<String>,
}

/// Warnings about a loaded hook an author should act on: a hook that votes on
/// a decision event and fails closed only because nothing said otherwise (a
/// bug in a tool-call counter would deny every tool call).
pub fn author_warnings(hook: &crate::hooks::loaded::load::LoadedHook) -> Vec<String> {
    let mut out = Vec::new();
    for kind in &hook.subscriptions {
        if crate::event::kind::observed_kind(kind).is_some() {
            continue; // it watches: its failure decides nothing
        }
        let kind = crate::event::kind::handled_kind(kind);
        if hook.settings.on_failure_for(kind) != (OnFailure::Deny, false) {
            continue; // it fails open, or the author chose
        }
        let blocks = crate::event::kind::gate_rule(kind)
            == Some(crate::event::kind::GateRule::Block)
            && crate::sandbox::wit::answers_v3(hook.world_version);
        if class_of(kind) == EventClass::Decision || blocks {
            let method = match hook.kind {
                SourceKind::TypeScript => {
                    format!("the key `\"observe:{kind}\"` in defineHook")
                }
                _ => format!("the SDK's `{}_observed`", kind.replace('.', "_")),
            };
            out.push(format!(
                "`{}` votes on `{kind}` and fails closed by default (on_failure = \"deny\"): if it fails, {}. \
                 fix: if it only watches, subscribe to `observe:{kind}` ({method}); \
                 if it decides, say so with `on_failure = \"deny\"` (or \"abstain\") in its [hooks.\"{}\"] table",
                hook.id(),
                match kind {
                    "actions.requested" => "every tool call it is asked about is denied",
                    "permission.requested" => "every permission request it is asked about is denied",
                    "file.edit.requested" => "the file write is aborted",
                    _ => "what the event announces is blocked",
                },
                hook.slug.as_str(),
            ));
        }
    }
    out
}

/// One subscription as an auditor sees it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Subscription {
    /// The kind, or `*`.
    pub kind: String,
    /// What the hook may do with those events: `observe`, `decision`, `edit`,
    /// `gate`, or `any` for `*` (a wildcard handler receives every class).
    pub class: String,
    /// What its answers can do to the agent ([`powers`]): `deny`, `ask`,
    /// `allow`, `rewrite input`, `block`, `continue turn`, `own file edits`,
    /// `edit agent input`, `add context`; empty for a hook that only watches.
    pub may: Vec<&'static str>,
}

/// What a hook of world `world` subscribed as `key` can do to the agent
/// with its answers. A hook of a world before 0.3.0 cannot rewrite, add
/// context, answer a gate or a permission request; an `observe:` handler
/// casts no vote but may add context like any handler; aggregate observers
/// can do nothing; a `*` handler votes (abstaining when it fails) on
/// whatever it receives, which the list does not spell out.
pub fn powers(key: &str, world: &str, aggregate: bool) -> Vec<&'static str> {
    use crate::event::kind::{self, GateRule};
    let v3 = crate::sandbox::wit::answers_v3(world);
    let k = kind::handled_kind(key);
    if aggregate || (!v3 && kind::answered_from_v3(k)) {
        return Vec::new();
    }
    if kind::observed_kind(key).is_some() {
        return if v3 && kind::takes_context(k) {
            vec!["add context"]
        } else {
            Vec::new()
        };
    }
    let mut may: Vec<&'static str> = match (class_of(k), k) {
        (_, "actions.requested") => vec!["deny", "ask", "allow"],
        (_, kind::PERMISSION_REQUESTED) => vec!["deny", "allow"],
        (EventClass::Decision, _) => vec!["own file edits"],
        (EventClass::Edit, _) => vec!["edit agent input"],
        (EventClass::Gate, _) => match kind::gate_rule(k) {
            Some(GateRule::Continue) => vec!["continue turn"],
            _ => vec!["block"],
        },
        (EventClass::Observe, _) => Vec::new(),
    };
    if kind::rewritten_kind(key).is_some() {
        may.push("rewrite input");
    }
    if v3 && key != WILDCARD && kind::takes_context(k) {
        may.push("add context");
    }
    may
}

/// The audit of one agent folder.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Audit {
    /// The agent folder.
    pub agent: String,
    /// Hooks in registration order.
    pub hooks: Vec<HookAudit>,
}

/// What each of `h`'s subscriptions is and may do.
fn subscriptions(h: &crate::hooks::loaded::load::LoadedHook) -> Vec<Subscription> {
    h.subscriptions
        .iter()
        .map(|k| Subscription {
            kind: k.clone(),
            class: if k == WILDCARD {
                "any".into()
            } else {
                // `observe:<kind>` watches (observe); `rewrite:<kind>` votes (its kind's class).
                let k = crate::event::kind::rewritten_kind(k).unwrap_or(k);
                format!("{:?}", class_of(k)).to_lowercase()
            },
            may: powers(
                k,
                h.world_version,
                h.scope == crate::event::scope::Scope::Aggregate,
            ),
        })
        .collect()
}

/// Audits a loaded runtime.
pub fn audit(rt: &Runtime) -> Audit {
    // An unreadable lock pins nothing: every hook counts as drifted from it.
    let lock = Lock::read(&rt.agent_dir().join(crate::hooks::loaded::lock::LOCK_FILE));
    let hooks = rt
        .hooks()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            (
                i,
                h,
                match &lock {
                    Ok(None) => (LockStatus::Unlocked, None),
                    Ok(Some(lock)) => lock.status(h),
                    Err(p) => (
                        LockStatus::Drifted,
                        Some(format!("{}: {}", p.path.display(), p.message)),
                    ),
                },
            )
        })
        .map(|(i, h, (lock, lock_detail))| HookAudit {
            position: i + 1,
            slug: h.slug.to_string(),
            source_kind: h.kind,
            source: h.source.display().to_string(),
            source_sha256: h.source_sha256.clone(),
            component_sha256: h.component_sha256.clone(),
            world: format!("{WORLD}@{}", h.world_version),
            name: h.settings.name.clone(),
            description: h.settings.description.clone(),
            subscriptions: subscriptions(h),
            scope: h.scope.clone(),
            warnings: author_warnings(h),
            imports: h.import_audit.clone(),
            grants: h.settings.grants.iter().cloned().collect(),
            may: h.held.iter().map(|(_, held)| held.audit()).collect(),
            limits: h.settings.limits.clone(),
            instance: h.settings.instance,
            reuse_limit: h.settings.reuse_limit,
            critical: h.settings.critical,
            retry: h.settings.retry,
            on_failure: h.settings.on_failure,
            on_failure_by_kind: h.settings.on_failure_by_kind.clone(),
            config_keys: h.settings.config.keys().cloned().collect(),
            lock,
            lock_detail,
        })
        .collect();
    Audit {
        agent: rt.agent_dir().display().to_string(),
        hooks,
    }
}

impl Audit {
    /// A human-readable rendering, one block per hook.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "agent {}: {} hook(s), in registration order\n",
            self.agent,
            self.hooks.len()
        );
        for h in &self.hooks {
            h.write_text(&mut s);
        }
        s
    }
}

impl HookAudit {
    /// The `subscribes` line of [`HookAudit::write_text`], and the `may` line.
    fn write_subscriptions(&self, s: &mut String) {
        let h = self;
        let subs: Vec<String> = h
            .subscriptions
            .iter()
            .map(|s| format!("{} ({})", s.kind, s.class))
            .collect();
        let _ = writeln!(s, "   subscribes {}", subs.join(", "));
        // What can change what the agent does beyond allow / deny / ask:
        // an auditor's first question about a hook.
        let strong: Vec<String> = h
            .subscriptions
            .iter()
            .flat_map(|sub| {
                sub.may
                    .iter()
                    .filter(|p| matches!(**p, "rewrite input" | "block" | "continue turn"))
                    .map(move |p| format!("{p} ({})", crate::event::kind::handled_kind(&sub.kind)))
            })
            .collect();
        if !strong.is_empty() {
            let _ = writeln!(s, "   may        {}", strong.join(", "));
        }
    }

    /// What a failed vote counts as: the hook's `on_failure`, then each
    /// subscription's own (`deny (prompt.submitted: abstain)`).
    fn on_failure_text(&self) -> String {
        let mut text = word(&self.on_failure);
        if !self.on_failure_by_kind.is_empty() {
            let by: Vec<String> = self
                .on_failure_by_kind
                .iter()
                .map(|(kind, f)| format!("{kind}: {}", word(f)))
                .collect();
            text = format!("{text} ({})", by.join(", "));
        }
        text
    }

    /// The `import` lines of [`HookAudit::write_text`]: each import and what grants it.
    fn write_imports(&self, s: &mut String) {
        let h = self;
        for i in &h.imports {
            let need = match &i.need {
                crate::sandbox::grants::Need::Types => "world types".to_owned(),
                crate::sandbox::grants::Need::Grant(g) => format!("grant `{g}`"),
                crate::sandbox::grants::Need::Baseline(what) => format!("baseline: {what}"),
                crate::sandbox::grants::Need::Never(why) => format!("never: {why}"),
            };
            let _ = writeln!(
                s,
                "   import     {} ({need}){}",
                i.import,
                if i.granted { "" } else { " REFUSED" }
            );
        }
    }

    /// One hook's block of [`Audit::to_text`].
    fn write_text(&self, s: &mut String) {
        let h = self;
        let _ = writeln!(
            s,
            "\n{}. {} ({}, {})",
            h.position,
            h.scope.hook_id(&h.slug),
            word(&h.source_kind),
            h.world
        );
        let _ = writeln!(
            s,
            "   source     {}  sha256 {}",
            h.source,
            &h.source_sha256[..16.min(h.source_sha256.len())]
        );
        let _ = writeln!(s, "   component  sha256 {}", h.component_sha256);
        let status = match h.lock {
            LockStatus::Unlocked => "unlocked (no hookrt.lock)",
            LockStatus::Locked => "locked (matches hookrt.lock)",
            LockStatus::Drifted => "DRIFTED",
        };
        let detail = h
            .lock_detail
            .as_deref()
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        let _ = writeln!(s, "   lock       {status}{detail}");
        if let Some(name) = &h.name {
            let _ = writeln!(
                s,
                "   name       {name}{}",
                h.description
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            );
        }
        h.write_subscriptions(s);
        let _ = writeln!(s, "   scope      {}", h.scope);
        let _ = writeln!(s, "   grants     {}", h.grants.join(", "));
        h.write_imports(s);
        for (_, label, lines) in &h.may {
            for line in lines {
                let _ = writeln!(s, "   {label:<10} {line}");
            }
        }
        let _ = writeln!(s, "   limits     {}", h.limits_text());
        let policy = if h.critical {
            "critical: a final failure fails the turn"
        } else {
            "optional: failures are recorded only"
        };
        let _ = writeln!(
            s,
            "   policy     {policy} | {} attempt(s), backoff {} ms | on failure of a decision: {}",
            h.retry.max_attempts,
            h.retry.backoff_ms,
            h.on_failure_text()
        );
        if !h.config_keys.is_empty() {
            let _ = writeln!(s, "   config     {}", h.config_keys.join(", "));
        }
        for w in &h.warnings {
            let _ = writeln!(s, "   warning    {w}");
        }
    }

    /// The `limits` line: every bound in force.
    fn limits_text(&self) -> String {
        let (h, l) = (self, &self.limits);
        format!(
            "{} | deadline {} ms | memory {} MiB | tables {}x{} elements | instances {} | memories {} | output {} B per delivery, {} B per minute | instance {}",
            match l.metering {
                Metering::Fuel => format!("fuel {}", l.fuel),
                Metering::Epoch => "epoch-only (no fuel; the deadline binds)".to_owned(),
            },
            l.deadline_ms,
            l.memory_bytes >> 20,
            l.tables,
            l.table_elements,
            l.instances,
            l.memories,
            l.output_bytes,
            l.log_bytes_per_minute,
            match h.instance {
                InstancePolicy::Fresh => "fresh".to_owned(),
                InstancePolicy::Reuse => format!("reuse (up to {} deliveries each)", h.reuse_limit),
            }
        )
    }
}

/// A value as `hookrt.toml` and the JSON audit spell it (`single_file`,
/// `deny`), not as Rust debug-prints it (`SingleFile`, `Deny`).
fn word(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}
