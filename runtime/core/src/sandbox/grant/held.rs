//! What a grant holds for a loaded hook, one face for every grant: a
//! [`Grant`](super::Grant)'s `resolve` makes it from the hook's table on
//! this host ([`Resolving`]); each delivery's store is armed with it
//! ([`Held::arm`], kept in the store's `grants` under the grant's name,
//! where the grant's host functions find it); `audit`, the lock and
//! redaction read what it says of itself. No other module names a grant's
//! own types.

use std::path::Path;
use std::sync::Arc;

use crate::event::transcript::Transcript;
use crate::sandbox::grant::table::GrantTable;
use crate::sandbox::host::StoreData;
use crate::sandbox::state::StateStore;

/// How a grant resolves its table (empty when it is named without one) for
/// a hook: what it holds, nothing (it needs no state of its own for this
/// table), or why the hook cannot have it here.
pub(crate) type Resolve = fn(&GrantTable, &Resolving<'_>) -> Result<Option<Arc<dyn Held>>, Refusal>;

/// What a grant resolves against at load.
pub(crate) struct Resolving<'a> {
    /// The project folder (for a grant that `needs_project`).
    pub project: Option<&'a Path>,
    /// The hook's id across scopes (`Scope::hook_id`).
    pub hook_id: &'a str,
}

/// Why a hook cannot be given a grant here, and what fixes it.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub why: String,
    pub fix: &'static str,
}

impl Refusal {
    /// `why` (anything that says itself), with `fix`.
    pub(crate) fn new(why: impl std::fmt::Display, fix: &'static str) -> Refusal {
        Refusal {
            why: why.to_string(),
            fix,
        }
    }
}

/// What a grant's resolution `made` keeps for the hook, as `held` wraps it
/// (the policy shared by every delivery), or the refusal naming `fix`.
pub(crate) fn kept<P, E: std::fmt::Display, H: Held + 'static>(
    made: Result<P, E>,
    fix: &'static str,
    held: fn(Arc<P>) -> H,
) -> Result<Option<Arc<dyn Held>>, Refusal> {
    let policy = made.map_err(|e| Refusal::new(e, fix))?;
    Ok(Some(Arc::new(held(Arc::new(policy)))))
}

/// What a delivery's store is armed with besides the hook's own grants.
pub(crate) struct Arming<'a> {
    /// The runtime's state store (where a rate window is kept).
    pub state: &'a Arc<StateStore>,
    /// The transcript the event's bridge named beside it, if any.
    pub transcript: Option<&'a Arc<Transcript>>,
}

/// A grant as a loaded hook holds it.
pub(crate) trait Held: Send + Sync + std::fmt::Debug {
    /// Puts this delivery's part of the grant into `data` (`grants.put`
    /// under the grant's name): a shared policy, or a budget counted anew
    /// each delivery (also for a warm instance).
    fn arm(&self, data: &mut StoreData, arming: &Arming<'_>);

    /// What `audit` says the hook may do with it: the JSON key, the text
    /// label, and one line per thing it may do.
    fn audit(&self) -> (&'static str, &'static str, Vec<String>);

    /// What `hookrt.lock` pins of it besides the settings: name and pin
    /// (`exec`'s programs, by digest).
    fn pins(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Values everything hookrt writes must mask, with their names
    /// (`secret`'s).
    fn masked(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
