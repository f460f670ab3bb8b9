//! World 0.2.0: configuration, per-hook state, metrics, HTTP, decisions and
//! edits. The host speaks the newest world; a 0.2.0 hook gets the envelope
//! and context converted down (a gate event's class reads `observe`: it
//! cannot answer one), and its answers and log levels read up.

use super::v0_4_0::{WitContext, WitEventClass, WitScope};
use crate::event::answer::{Answer, Approval, FileEdit};

wasmtime::component::bindgen!({
    path: "../../wit/v0.2.0",
    world: "define-hook",
    ownership: Borrowing { duplicate_if_necessary: false },
});

use crate::sandbox::wit::v0_2_0::hookrt::hook::types as t;

older_world!();

/// The newest context converted for a 0.2.0 hook: what it cannot answer
/// (a gate, a permission request) it observes.
pub(crate) fn context_down<'a>(cx: &WitContext<'a>, v3_only: bool) -> t::Context<'a> {
    t::Context {
        handler: cx.handler,
        slug: cx.slug,
        budget_ms: cx.budget_ms,
        class: match cx.class {
            _ if v3_only => t::EventClass::Observe,
            WitEventClass::Observe | WitEventClass::Gate => t::EventClass::Observe,
            WitEventClass::Decision => t::EventClass::Decision,
            WitEventClass::Edit => t::EventClass::Edit,
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

/// A 0.2.0 answer in the runtime's types.
pub(crate) fn answer_up(r: t::Response) -> Answer {
    match r {
        t::Response::None => Answer::None,
        t::Response::Approvals(list) => Answer::Approvals(
            list.into_iter()
                .map(|a| match a {
                    t::Approval::Abstain => Approval::Abstain,
                    t::Approval::Allow => Approval::Allow,
                    t::Approval::Ask(q) => Approval::Ask(q),
                    t::Approval::Deny(r) => Approval::Deny(r),
                })
                .collect(),
        ),
        t::Response::FileEdit(f) => Answer::FileEdit(match f {
            t::FileEdit::NotHandled => FileEdit::NotHandled,
            t::FileEdit::Applied => FileEdit::Applied,
            t::FileEdit::Failed(m) => FileEdit::Failed(m),
        }),
        t::Response::Edit(json) => Answer::Edit(json),
    }
}
