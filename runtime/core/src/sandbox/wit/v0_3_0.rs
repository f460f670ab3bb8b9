//! World 0.3.0: 0.2.0 and the answers agents' hooks give — rewrites,
//! context, gates, permission requests. The host speaks the newest world; a
//! 0.3.0 hook gets the envelope and context converted down (the same
//! records: it lacks only 0.4.0's grants) and its answers read up.

use super::v0_4_0::{WitContext, WitEventClass, WitScope};

wasmtime::component::bindgen!({
    path: "../../wit/v0.3.0",
    world: "define-hook",
    ownership: Borrowing { duplicate_if_necessary: false },
});

use crate::sandbox::wit::v0_3_0::hookrt::hook::types as t;

older_world!();

reply_up!(t);

/// The newest context converted for a 0.3.0 hook (the same fields).
pub(crate) fn context_down<'a>(cx: &WitContext<'a>) -> t::Context<'a> {
    t::Context {
        handler: cx.handler,
        slug: cx.slug,
        budget_ms: cx.budget_ms,
        class: match cx.class {
            WitEventClass::Observe => t::EventClass::Observe,
            WitEventClass::Decision => t::EventClass::Decision,
            WitEventClass::Edit => t::EventClass::Edit,
            WitEventClass::Gate => t::EventClass::Gate,
        },
        agent: cx.agent,
        session: cx.session,
        scope: match cx.scope {
            WitScope::Primary => t::Scope::Primary,
            WitScope::Subagent(id) => t::Scope::Subagent(id),
            WitScope::Aggregate => t::Scope::Aggregate,
        },
        transport: t::Transport {
            kind: cx.transport.kind,
            detail: cx.transport.detail,
        },
    }
}
