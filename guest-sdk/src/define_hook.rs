//! `define_hook!`: turns one struct and a kind-to-method map into a component's exports.

/// Export a hook: `define_hook!(MyHook { configure => setup, "kind" => method, "*" => other })`.
///
/// `MyHook` must implement `Default`. The runtime calls `configure` once on every fresh
/// component instance, before anything else: the macro then builds `MyHook::default()`
/// and, when a `configure => setup` entry is given (it must come first), calls
/// `fn setup(&mut self, config: &serde_json::Value) -> HookResult` with the hook's
/// `config` table from `hookrt.toml` (`{}` when there is none). An `Err` refuses the
/// config: the hook fails to load with that message. Without the entry any config is
/// accepted. Store what you need in the struct; it lives as long as the component
/// instance (treat it as a cache: the runtime may start a fresh instance for any
/// delivery, and it configures each one).
///
/// Each handler is `fn(&mut self, &Event, &Context) -> HookResult<R>` for any
/// `R: IntoResponse` (`&self` works too): `HookResult` (nothing to say),
/// `HookResult<Vec<Approval>>`, `HookResult<Vec<CallAnswer>>` (under
/// `"rewrite:actions.requested"`), `HookResult<FileEditAnswer>`,
/// `HookResult<Option<AgentInput>>`, `HookResult<Block>`, `HookResult<Continuation>`,
/// `HookResult<PermissionAnswer>` or `HookResult<Response>`. Any handler may also call
/// [`context::add`](crate::context::add). The keys become the hook's subscriptions, in
/// order (an event kind, `observe:<kind>`, `rewrite:<kind>` or `*`); duplicates or empty
/// keys fail to compile.
#[macro_export]
macro_rules! define_hook {
    ($hook:ty { configure => $configure:ident, $($kind:literal => $method:ident),+ $(,)? }) => {
        $crate::define_hook!(@export $hook,
            |hook: &mut $hook, config: &$crate::serde_json::Value| <$hook>::$configure(hook, config),
            $($kind => $method),+);
    };
    ($hook:ty { $($kind:literal => $method:ident),+ $(,)? }) => {
        $crate::define_hook!(@export $hook, $crate::__private::accept_any_config::<$hook>,
            $($kind => $method),+);
    };
    (@export $hook:ty, $setup:expr, $($kind:literal => $method:ident),+) => {
        const _: () = {
            const SUBSCRIPTIONS: &[&str] = &[$($kind),+];
            const _: () = $crate::__private::check_subscriptions(SUBSCRIPTIONS);

            ::std::thread_local! {
                static INSTANCE: ::core::cell::RefCell<::core::option::Option<$hook>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }

            #[doc(hidden)]
            pub struct __HookrtAdapter;

            impl $crate::bindings::Guest for __HookrtAdapter {
                fn configure(
                    config: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    $crate::__private::configure(&INSTANCE, &config, $setup)
                }

                fn subscriptions() -> ::std::vec::Vec<::std::string::String> {
                    $crate::__private::subscriptions(SUBSCRIPTIONS)
                }

                fn handle(
                    envelope: $crate::bindings::hookrt::hook::types::Envelope,
                    context: $crate::bindings::hookrt::hook::types::Context,
                ) -> ::core::result::Result<
                    $crate::bindings::hookrt::hook::types::Reply,
                    ::std::string::String,
                > {
                    $crate::__private::run(
                        &INSTANCE,
                        SUBSCRIPTIONS,
                        envelope,
                        context,
                        |hook: &mut $hook, event, cx| match cx.handler() {
                            $($kind => ::core::option::Option::Some(
                                $crate::__private::respond(<$hook>::$method(hook, event, cx)),
                            ),)+
                            _ => ::core::option::Option::None,
                        },
                    )
                }
            }

            $crate::bindings::export!(__HookrtAdapter with_types_in $crate::bindings);
        };
    };
}

/// Support for `define_hook!`'s expansion; not part of the public API.
#[doc(hidden)]
pub mod __private {
    use std::cell::RefCell;
    use std::thread::LocalKey;

    use serde_json::Value;

    use crate::bindings::hookrt::hook::types as wit;
    use crate::{Context, Event, HookResult, IntoResponse, Response};

    /// Compile-time check of the macro's keys: non-empty and unique.
    pub const fn check_subscriptions(keys: &[&str]) {
        let mut i = 0;
        while i < keys.len() {
            if keys[i].is_empty() {
                panic!(
                    "define_hook!: an event kind is empty; use a kind like \"message.completed\" or \"*\""
                );
            }
            let mut j = i + 1;
            while j < keys.len() {
                if str_eq(keys[i], keys[j]) {
                    panic!(
                        "define_hook!: the same event kind is listed twice; map each kind to one method"
                    );
                }
                j += 1;
            }
            i += 1;
        }
    }

    const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// The `subscriptions` export: the macro's keys in order.
    pub fn subscriptions(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|key| (*key).to_owned()).collect()
    }

    /// The setup of a hook without a `configure` entry: any config is fine.
    pub fn accept_any_config<H>(_hook: &mut H, _config: &Value) -> HookResult {
        Ok(())
    }

    /// The `configure` export: a fresh `H::default()`, set up with the parsed config, becomes
    /// the instance; a refused config leaves no instance behind.
    pub fn configure<H: Default + 'static>(
        instance: &'static LocalKey<RefCell<Option<H>>>,
        config: &str,
        setup: impl FnOnce(&mut H, &Value) -> HookResult,
    ) -> Result<(), String> {
        let config: Value = serde_json::from_str(config)
            .map_err(|err| format!("config is not valid JSON: {err}"))?;
        let mut hook = H::default();
        setup(&mut hook, &config)?;
        instance.with(|cell| {
            let mut slot = cell
                .try_borrow_mut()
                .map_err(|_| "hook instance is busy: configure during a delivery".to_owned())?;
            *slot = Some(hook);
            Ok(())
        })
    }

    /// Turn whatever a handler returned into a [`Response`].
    pub fn respond<R: IntoResponse>(result: HookResult<R>) -> HookResult<Response> {
        result.map(IntoResponse::into_response)
    }

    /// The `handle` export: wrap the envelope, find the instance, dispatch, stringify
    /// errors, and reply with the answer and the context the handler added.
    pub fn run<H: 'static>(
        instance: &'static LocalKey<RefCell<Option<H>>>,
        keys: &[&str],
        envelope: wit::Envelope,
        context: wit::Context,
        dispatch: impl FnOnce(&mut H, &Event, &Context) -> Option<HookResult<Response>>,
    ) -> Result<wit::Reply, String> {
        let event = Event::from_wit(envelope);
        let cx = Context::from_wit(context);
        // Whatever an earlier call added and nobody took (`configure`) is not this
        // delivery's context.
        crate::context::discard();
        let outcome = instance.with(|cell| -> Result<Option<HookResult<Response>>, String> {
            // Re-entry cannot happen (the host never calls a guest from inside a call),
            // but a refused borrow is an error, not a trap.
            let mut slot = cell
                .try_borrow_mut()
                .map_err(|_| "hook instance is busy: re-entrant delivery".to_owned())?;
            // The host configures every instance before its first delivery; without that
            // the hook's setup never ran, so running a handler would ignore its config.
            let hook = slot.as_mut().ok_or_else(|| {
                format!(
                    "hook `{}` was not configured: the host must call `configure` before `handle` (event {})",
                    cx.slug(),
                    event.id()
                )
            })?;
            Ok(dispatch(hook, &event, &cx))
        });
        let added = crate::context::take();
        match outcome? {
            Some(Ok(response)) => {
                if response.rewrites() && !cx.handler().starts_with(REWRITE_PREFIX) {
                    return Err(format!(
                        "handler `{}` of hook `{}` rewrote a call's input (event {}), but only a \
                         `{REWRITE_PREFIX}{}` subscription may rewrite: subscribe to it, or keep \
                         the input (no rewrite)",
                        cx.handler(),
                        cx.slug(),
                        event.id(),
                        event.kind()
                    ));
                }
                Ok(wit::Reply {
                    response: response.into_wit()?,
                    context: added,
                })
            }
            Some(Err(err)) => Err(err.into()),
            None => Err(format!(
                "no handler for `{}` in hook `{}` (event {}); it subscribes to: {}",
                cx.handler(),
                cx.slug(),
                event.id(),
                keys.join(", ")
            )),
        }
    }

    /// Prefix of a subscription that may rewrite a call's input (`rewrite:actions.requested`).
    pub const REWRITE_PREFIX: &str = "rewrite:";
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use serde_json::Value;

    use super::__private::{configure, respond, run};
    use crate::bindings::hookrt::hook::types as wit;
    use crate::{Approval, CallAnswer, HookError, HookResult, Response};

    #[derive(Default)]
    struct Limit {
        max: u64,
    }

    std::thread_local! {
        static INSTANCE: RefCell<Option<Limit>> = const { RefCell::new(None) };
    }

    fn setup(hook: &mut Limit, config: &Value) -> HookResult {
        hook.max = config["max"]
            .as_u64()
            .ok_or_else(|| HookError::new("config.max must be a number"))?;
        Ok(())
    }

    fn envelope() -> wit::Envelope {
        wit::Envelope {
            schema_version: 1,
            id: "evt_1".into(),
            kind: "actions.requested".into(),
            timestamp: "2026-11-30T09:00:00Z".into(),
            coordinates: wit::Coordinates {
                agent: "a".into(),
                session: "s".into(),
                turn: None,
                step: None,
                sequence: 0,
                subagent: None,
            },
            attempt: 1,
            idempotency_key: "k".into(),
            durability: wit::Durability::Accepted,
            data: r#"{"actions":[]}"#.into(),
        }
    }

    fn context() -> wit::Context {
        wit::Context {
            handler: "actions.requested".into(),
            slug: "limit".into(),
            budget_ms: 100,
            class: wit::EventClass::Decision,
            agent: "a".into(),
            session: "s".into(),
            scope: wit::Scope::Primary,
            transport: wit::Transport {
                kind: "in-process".into(),
                detail: None,
            },
        }
    }

    fn handle_with(
        handler: &str,
        answer: impl FnOnce(&mut Limit) -> HookResult<Response>,
    ) -> Result<wit::Reply, String> {
        let mut cx = context();
        cx.handler = handler.into();
        run(
            &INSTANCE,
            &["actions.requested", "rewrite:actions.requested"],
            envelope(),
            cx,
            |hook, _, cx| {
                assert_eq!(cx.class(), crate::EventClass::Decision);
                Some(answer(hook))
            },
        )
    }

    fn handle() -> Result<wit::Response, String> {
        handle_with("actions.requested", |hook| {
            respond(Ok(vec![Approval::deny(format!("max {}", hook.max))]))
        })
        .map(|reply| reply.response)
    }

    #[test]
    fn handle_before_configure_is_an_error_not_a_default_instance() {
        let err = handle().expect_err("not configured");
        assert!(err.contains("hook `limit` was not configured"), "{err}");
    }

    #[test]
    fn configure_sets_up_the_instance_handlers_use() {
        configure(&INSTANCE, r#"{"max":3}"#, setup).expect("accepted");
        let wit::Response::Approvals(list) = handle().expect("handled") else {
            panic!("not approvals")
        };
        assert!(matches!(&list[..], [wit::Approval::Deny(r)] if r == "max 3"));
    }

    #[test]
    fn a_refused_config_reports_the_setup_message_and_leaves_no_instance() {
        let err = configure(&INSTANCE, "{}", setup).expect_err("refused");
        assert_eq!(err, "config.max must be a number");
        assert!(INSTANCE.with(|cell| cell.borrow().is_none()));
        let err = configure(&INSTANCE, "not json", setup).expect_err("refused");
        assert!(err.starts_with("config is not valid JSON"), "{err}");
    }

    #[test]
    fn added_context_is_the_replys_and_a_failure_drops_it() {
        configure(&INSTANCE, r#"{"max":3}"#, setup).expect("accepted");
        // Left over from before the delivery (e.g. added in configure): not this reply's.
        crate::context::add("stale");
        let reply = handle_with("actions.requested", |_| {
            crate::context::add("one");
            crate::context::add("two");
            respond(Ok(()))
        })
        .expect("handled");
        assert_eq!(reply.context.as_deref(), Some("one\ntwo"));
        assert!(matches!(reply.response, wit::Response::None));
        let reply = handle_with("actions.requested", |_| respond(Ok(()))).expect("handled");
        assert_eq!(reply.context, None);
        let err = handle_with("actions.requested", |_| {
            crate::context::add("lost");
            respond::<()>(Err(HookError::new("boom")))
        })
        .expect_err("failed");
        assert_eq!(err, "boom");
        assert_eq!(
            crate::context::take(),
            None,
            "a failed handler's context is dropped"
        );
    }

    #[test]
    fn only_a_rewrite_subscription_may_rewrite_and_a_rewrite_is_an_object() {
        configure(&INSTANCE, r#"{"max":3}"#, setup).expect("accepted");
        let rewrite = || {
            respond(Ok(vec![CallAnswer::rewrite(
                Approval::Allow,
                serde_json::json!({"command": "ls"}),
            )]))
        };
        let err = handle_with("actions.requested", |_| rewrite()).expect_err("refused");
        assert!(
            err.contains("only a `rewrite:actions.requested` subscription may rewrite"),
            "{err}"
        );
        let reply = handle_with("rewrite:actions.requested", |_| rewrite()).expect("handled");
        let wit::Response::Calls(calls) = reply.response else {
            panic!("not calls")
        };
        assert!(
            matches!(&calls[..], [wit::CallAnswer { approval: wit::Approval::Allow, rewrite: Some(r) }] if r == r#"{"command":"ls"}"#)
        );
        // Calls without a rewrite are fine from a plain subscription.
        let reply = handle_with("actions.requested", |_| {
            respond(Ok(vec![CallAnswer::keep(Approval::Allow)]))
        })
        .expect("handled");
        assert!(matches!(reply.response, wit::Response::Calls(_)));
        let err = handle_with("rewrite:actions.requested", |_| {
            respond(Ok(vec![
                CallAnswer::keep(Approval::Allow),
                CallAnswer::rewrite(Approval::Allow, serde_json::json!(["ls"])),
            ]))
        })
        .expect_err("not an object");
        assert!(
            err.starts_with("the rewrite of call #1 is an array, not a JSON object"),
            "{err}"
        );
    }

    #[test]
    fn unit_results_become_no_response() {
        assert_eq!(respond(Ok(())), Ok(Response::None));
        assert_eq!(
            respond::<()>(Err(HookError::new("boom"))),
            Err(HookError::new("boom"))
        );
    }
}
