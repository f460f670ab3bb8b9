//! The resolver `hookrt hook` decides through (`hookrt::front::decide`,
//! the path `hookrt serve` takes with its service): the agent folder's
//! hooks loaded in this process for its one event, never built here, with
//! no journal (a process per event holds nothing to deduplicate). The event
//! runs on a thread of its own, so the decide path's deadline holds over
//! the hooks as it does over the service's.

use std::future::Future;
use std::path::Path;

use hookrt::front::decide::Resolver;
use hookrt::{
    BuildOptions, Dispatch, Durability, EmitError, Envelope, Problems, Receipt, ResolveReply,
    Runtime, Transport,
};

/// One event's runtime, loaded for the process's lifetime.
pub(super) struct OneShot {
    /// Leaked: the process ends with the answer, and its hooks, engine,
    /// pool and threads go with it (what they wrote is written: state
    /// commits per call).
    rt: &'static Runtime,
}

impl OneShot {
    /// The hooks of `dir`, from the cache only (the agent would time a
    /// build out and run the tool), told they serve `bridge_name`'s command
    /// hook; `kind` is the event's, which decides whether hooks' state is
    /// opened per user. `command` names this process in messages.
    pub(super) fn load(
        dir: &Path,
        opts: BuildOptions,
        bridge_name: &str,
        kind: &str,
        command: &str,
    ) -> Result<OneShot, Problems> {
        let opts = BuildOptions {
            cached_only: true,
            one_shot: true,
            ..opts
        };
        let mut rt = Runtime::load_blocking(dir, &opts, &mut |_| {})?;
        rt.set_transport(Transport {
            kind: bridge_name.into(),
            detail: Some("command".into()),
        });
        // A process per event: what must outlive it (the loop governor's
        // count of continues in a row, hooks' `state`, a `notify` grant's
        // rate window) is kept per user. Opened only when something reads it.
        let kept = [
            hookrt::sandbox::Need::Grant("state".into()),
            hookrt::sandbox::Need::Grant("notify".into()),
        ];
        let keeps_state = rt
            .hooks()
            .iter()
            .any(|h| h.import_audit.iter().any(|i| kept.contains(&i.need)));
        // Without it (no home, an unsafe folder) the event still runs, its
        // state in memory: the governor then counts within this process
        // only, and the agent's own cap on stop continues still holds.
        if (keeps_state || kind == hookrt::event::TURN_STOPPING)
            && let Err(e) = rt.keep_state_per_user()
        {
            eprintln!(
                "{command}: hooks' state and the loop governor's count are kept in memory only: cannot open hookrt's per-user state ({e}); set HOOKRT_STATE_DIR to a folder of your own"
            );
        }
        Ok(OneShot {
            rt: Box::leak(Box::new(rt)),
        })
    }
}

impl Resolver for OneShot {
    fn resolve(
        &self,
        envelope: Envelope,
    ) -> impl Future<Output = Result<ResolveReply, EmitError>> + Send {
        let rt = self.rt;
        let id = envelope.id.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            // Nobody waits any more only past the deadline.
            let _ = tx.send(rt.dispatch(&envelope));
        });
        async move {
            match rx.await {
                Ok(Ok(dispatch)) => Ok(replied(dispatch)),
                Ok(Err(e)) => Err(EmitError::Invalid(e)),
                // The thread ended without a word: a panic, which ends the
                // process as a failure (`fail_on_panic_and_deadline`).
                Err(_) => Err(EmitError::ShuttingDown(id)),
            }
        }
    }
}

/// The reply of a dispatch held in memory, each failed delivery said on
/// stderr (the agent shows it; the answer is on stdout).
fn replied(dispatch: Dispatch) -> ResolveReply {
    for d in dispatch
        .deliveries
        .iter()
        .filter(|d| d.outcome.is_failure())
    {
        eprintln!(
            "hookrt: hook `{}` {} on {}: {}",
            d.hook,
            d.outcome,
            d.kind,
            d.error.as_deref().unwrap_or("")
        );
    }
    ResolveReply {
        receipt: Receipt {
            event_id: dispatch.event_id,
            durability: Durability::Accepted,
            seq: None,
            duplicate: false,
        },
        resolution: dispatch.resolution,
    }
}
