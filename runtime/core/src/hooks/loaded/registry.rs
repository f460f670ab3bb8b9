//! The registry: loaded hooks in registration order, and which handlers an
//! event reaches.
//!
//! Registration order is deterministic: the slugs listed in `hookrt.toml`'s
//! `order` first, in that order, then every other hook by slug (per scope).
//! An event reaches the hooks of its own scope (primary, or its subagent's),
//! then the aggregate observers; within each, every event-specific handler
//! runs in registration order, then every `*` handler in registration order.
//! An `observe:<kind>` or `rewrite:<kind>` subscription is an event-specific
//! handler: it runs in the same place as `<kind>` would, with its own key as
//! the handler.

use crate::event::envelope::{Envelope, EnvelopeError};
use crate::event::kind::{WILDCARD, handled_kind};
use crate::event::scope::Scope;
use crate::hooks::folder::config::{Config, OnUnscoped};
use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::project::Project;

/// Loaded hooks in registration order.
pub(crate) struct Registry {
    hooks: Vec<LoadedHook>,
    on_unscoped: OnUnscoped,
    /// The loop governor's `max_continues`.
    pub(crate) max_continues: u32,
    /// The project folder, when a hook acts on it (`exec`, `read`).
    bound: Option<Project>,
}

/// One planned delivery: which hook, which handler key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Planned<'a> {
    /// Index of the hook in registration order.
    pub index: usize,
    /// The handler key: the event kind, `observe:<kind>`, `rewrite:<kind>` or `*`.
    pub handler: &'a str,
}

impl Registry {
    /// Orders `hooks`: primary hooks (and aggregate observers) first, then each
    /// subagent's by id; within a scope its configured `order` first, then by
    /// slug. Bound to `project` when a hook acts on it.
    pub(crate) fn new(
        mut hooks: Vec<LoadedHook>,
        config: &Config,
        project: Option<Project>,
    ) -> Registry {
        let key = |h: &LoadedHook| {
            let home = if h.scope == Scope::Aggregate {
                Scope::Primary
            } else {
                h.scope.clone()
            };
            let order = config.order(&home);
            (
                home,
                order
                    .iter()
                    .position(|s| *s == h.slug)
                    .unwrap_or(order.len()),
                h.slug.clone(),
            )
        };
        hooks.sort_by_key(key);
        let bound = project.filter(|_| hooks.iter().any(LoadedHook::uses_project));
        Registry {
            hooks,
            on_unscoped: config.on_unscoped,
            max_continues: config.max_continues,
            bound,
        }
    }

    /// Whether `envelope` may reach these hooks ([`Project::admits`]): when
    /// one acts on the project folder, an event naming another is refused.
    pub(crate) fn admit(&self, envelope: &Envelope) -> Result<(), EnvelopeError> {
        admit(self.bound.as_ref(), envelope)
    }

    /// Why a decision of `scope` is refused before any hook runs: it is a
    /// subagent's that no `subagents/<id>/hooks/` serves, and `on_unscoped`
    /// is `deny` (the default). `None` for the primary scope, a served
    /// subagent, or `on_unscoped = "abstain"`.
    pub(crate) fn unscoped_refusal(&self, scope: &Scope) -> Option<String> {
        let Scope::Subagent(id) = scope else {
            return None;
        };
        if self.on_unscoped == OnUnscoped::Abstain || self.hooks.iter().any(|h| h.scope == *scope) {
            return None;
        }
        Some(format!(
            "subagent `{id}` has no hooks (no subagents/{id}/hooks/ in the agent folder), so nothing can decide its requests; denied (set `on_unscoped = \"abstain\"` in hookrt.toml to leave them to the agent)"
        ))
    }

    /// The hooks in registration order.
    pub(crate) fn hooks(&self) -> &[LoadedHook] {
        &self.hooks
    }

    /// The deliveries one event of `kind` in scope `scope` gets, in order
    /// (made as they are taken: nothing allocated).
    pub(crate) fn plan<'a>(
        &'a self,
        kind: &'a str,
        scope: &'a Scope,
    ) -> impl Iterator<Item = Planned<'a>> + 'a {
        plan(
            self.hooks
                .iter()
                .map(|h| (&h.scope, h.subscriptions.as_slice())),
            kind,
            scope,
        )
    }

    /// A plan maker that owns what it needs (ids, scopes, subscriptions), for
    /// another thread than the one running the hooks.
    pub(crate) fn planner(&self) -> Planner {
        Planner {
            hooks: self
                .hooks
                .iter()
                .map(|h| (h.id(), h.scope.clone(), h.subscriptions.clone()))
                .collect(),
            bound: self.bound.clone(),
        }
    }
}

fn admit(bound: Option<&Project>, envelope: &Envelope) -> Result<(), EnvelopeError> {
    bound.map_or(Ok(()), |p| p.admits(&envelope.data))
}

/// Plans deliveries from hook ids, scopes and subscriptions alone.
#[derive(Debug, Clone)]
pub(crate) struct Planner {
    hooks: Vec<(String, Scope, Vec<String>)>,
    bound: Option<Project>,
}

impl Planner {
    /// [`Registry::admit`], on another thread.
    pub(crate) fn admit(&self, envelope: &Envelope) -> Result<(), EnvelopeError> {
        admit(self.bound.as_ref(), envelope)
    }

    /// `(hook id, handler)` of each delivery of an event of `kind` in `scope`, in order.
    pub(crate) fn plan(&self, kind: &str, scope: &Scope) -> Vec<(String, String)> {
        plan(
            self.hooks.iter().map(|(_, sc, s)| (sc, s.as_slice())),
            kind,
            scope,
        )
        .map(|p| (self.hooks[p.index].0.clone(), p.handler.to_owned()))
        .collect()
    }
}

/// The event's own scope first, then aggregate observers; within each,
/// specific handlers in registration order, then `*` handlers.
fn plan<'a>(
    hooks: impl Iterator<Item = (&'a Scope, &'a [String])> + Clone + 'a,
    kind: &'a str,
    scope: &'a Scope,
) -> impl Iterator<Item = Planned<'a>> + 'a {
    static AGGREGATE: Scope = Scope::Aggregate;
    // The hook's key for `kind`: the kind itself, `observe:<kind>` or `rewrite:<kind>`.
    let specific = move |subs: &'a [String]| -> Option<&'a str> {
        subs.iter()
            .find_map(|s| (s != WILDCARD && handled_kind(s) == kind).then_some(s.as_str()))
    };
    [scope, &AGGREGATE].into_iter().flat_map(move |group| {
        let members = hooks
            .clone()
            .enumerate()
            .filter(move |(_, (sc, _))| *sc == group);
        let specific = members.clone().filter_map(move |(index, (_, s))| {
            specific(s).map(|handler| Planned { index, handler })
        });
        let wildcard = members
            .filter(|(_, (_, s))| s.iter().any(|s| s == WILDCARD))
            .map(|(index, _)| Planned {
                index,
                handler: WILDCARD,
            });
        specific.chain(wildcard)
    })
}
