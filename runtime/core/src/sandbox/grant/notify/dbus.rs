//! The Linux notifier: the `Notify` method of `org.freedesktop.Notifications`
//! on the user's session bus (the Desktop Notifications Specification), sent
//! with zbus.
//!
//! The whole exchange (connecting, authenticating, `Hello`, the call and its
//! answer) runs under one time bound, on a thread of its own with its own
//! single-threaded tokio runtime: a host function may be called from inside
//! the runtime an embedder runs hookrt on, where blocking on another would
//! panic, and a notifier that never answers costs that thread the bound and
//! the delivery no more than it. zbus's blocking API cannot bound the
//! connection's handshake, so its async one is used under `timeout`.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use zbus::zvariant::Value;

use super::message::Message;

/// The notification service's well-known name (and its interface's).
pub(crate) const SERVICE: &str = "org.freedesktop.Notifications";
/// Its object.
pub(crate) const OBJECT: &str = "/org/freedesktop/Notifications";
/// The application name every hook's notification carries: a hook cannot
/// pass itself off as another program.
pub(crate) const APP_NAME: &str = "hookrt";
/// The hint naming the hook that sent it (the specification lets a sender
/// add its own `x-vendor-` hints).
pub(crate) const HOOK_HINT: &str = "x-hookrt-hook";
/// How long past its bound the caller waits for the sending thread to say
/// it gave up, before saying so itself.
const GRACE: Duration = Duration::from_millis(200);

/// One notification to send: what, from which hook, replacing which
/// earlier one (0: none).
pub(crate) struct Notification {
    pub(crate) message: Message,
    pub(crate) hook: String,
    pub(crate) replaces: u32,
}

/// Sends `n` on the bus at `address` within `within`: the id the server gave
/// it, or why it was not shown (what was tried, in one sentence).
pub(crate) fn send(address: &str, n: Notification, within: Duration) -> Result<u32, String> {
    let tried = format!("{SERVICE} on the D-Bus session bus {address}");
    let (tx, rx) = mpsc::channel();
    let address = address.to_owned();
    let spawned = std::thread::Builder::new()
        .name("hookrt-notify".to_owned())
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start its I/O: {e}"))
                .and_then(|rt| {
                    rt.block_on(async {
                        tokio::time::timeout(within, call(&address, &n))
                            .await
                            .unwrap_or_else(|_| Err(no_answer(within)))
                    })
                });
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        return Err(format!("{tried}: cannot start a thread: {e}"));
    }
    rx.recv_timeout(within + GRACE)
        .unwrap_or_else(|_| Err(no_answer(within)))
        .map_err(|why| format!("{tried}: {why}"))
}

fn no_answer(within: Duration) -> String {
    format!("no answer within {} ms", within.as_millis())
}

/// Connects and calls `Notify`.
async fn call(address: &str, n: &Notification) -> Result<u32, String> {
    let connection = zbus::connection::Builder::address(address)
        .map_err(|e| format!("not a bus address: {e}"))?
        .build()
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let hints: HashMap<&str, Value<'_>> = HashMap::from([
        ("urgency", Value::U8(n.message.urgency.hint())),
        (HOOK_HINT, Value::from(n.hook.as_str())),
    ]);
    let actions: Vec<&str> = Vec::new();
    let body = (
        APP_NAME,
        n.replaces,
        "",
        n.message.title.as_str(),
        n.message.body.as_str(),
        actions,
        hints,
        // The server's own default of how long it is shown.
        -1i32,
    );
    let reply = connection
        .call_method(Some(SERVICE), OBJECT, Some(SERVICE), "Notify", &body)
        .await
        .map_err(|e| format!("the call failed: {e}"))?;
    reply
        .body()
        .deserialize::<u32>()
        .map_err(|e| format!("the answer is not a notification id: {e}"))
}
