//! `define_hook!`: turns one struct and a kind-to-method map into a component's exports.

/// Export a hook: `define_hook!(MyHook { "kind" => method, "*" => other })`.
///
/// `MyHook` must implement `Default`; one instance is created on the first delivery and
/// lives as long as the component instance (treat it as a cache: the runtime may start a
/// fresh instance for any delivery). Each method is
/// `fn(&mut self, &Event, &Context) -> HookResult` (`&self` works too). The keys become
/// the hook's subscriptions, in order; duplicates or empty keys fail to compile.
#[macro_export]
macro_rules! define_hook {
    ($hook:ty { $($kind:literal => $method:ident),+ $(,)? }) => {
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
                fn subscriptions() -> ::std::vec::Vec<::std::string::String> {
                    $crate::__private::subscriptions(SUBSCRIPTIONS)
                }

                fn handle(
                    envelope: $crate::bindings::hookrt::hook::types::Envelope,
                    context: $crate::bindings::hookrt::hook::types::Context,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    $crate::__private::run(
                        &INSTANCE,
                        SUBSCRIPTIONS,
                        envelope,
                        context,
                        |hook: &mut $hook, event, cx| match cx.handler() {
                            $($kind => ::core::option::Option::Some(
                                <$hook>::$method(hook, event, cx),
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

    use crate::bindings::hookrt::hook::types as wit;
    use crate::{Context, Event, HookResult};

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

    /// The `handle` export: wrap the envelope, find the instance, dispatch, stringify errors.
    pub fn run<H: Default + 'static>(
        instance: &'static LocalKey<RefCell<Option<H>>>,
        keys: &[&str],
        envelope: wit::Envelope,
        context: wit::Context,
        dispatch: impl FnOnce(&mut H, &Event, &Context) -> Option<HookResult>,
    ) -> Result<(), String> {
        let event = Event::from_wit(envelope);
        let cx = Context::from_wit(context);
        let outcome = instance.with(|cell| -> Result<Option<HookResult>, String> {
            // Re-entry cannot happen (the host never calls a guest from inside a call),
            // but a refused borrow is an error, not a trap.
            let mut slot = cell
                .try_borrow_mut()
                .map_err(|_| "hook instance is busy: re-entrant delivery".to_owned())?;
            let hook = slot.get_or_insert_with(H::default);
            Ok(dispatch(hook, &event, &cx))
        })?;
        match outcome {
            Some(result) => result.map_err(String::from),
            None => Err(format!(
                "no handler for `{}` in hook `{}` (event {}); it subscribes to: {}",
                cx.handler(),
                cx.slug(),
                event.id(),
                keys.join(", ")
            )),
        }
    }
}
