//! Why a call into a hook failed: the limit or fault behind a Wasmtime
//! error ([`classify`]), the store count an instantiation ran into
//! ([`count_limit`]), and the one line a delivery record keeps ([`describe`]).

use wasmtime::Trap;

use crate::sandbox::host::StoreData;
use crate::sandbox::outcome::Outcome;

/// Names the limit (or fault) behind a failed call into the hook.
pub(crate) fn classify(err: &wasmtime::Error, state: &StoreData) -> Outcome {
    if state.timed_out {
        return Outcome::Timeout;
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Outcome::OutOfFuel,
        Some(Trap::Interrupt) => Outcome::Timeout,
        _ if state.limiter.exceeded => Outcome::OutOfMemory,
        _ => Outcome::Trap,
    }
}

/// The store limit a failed instantiation ran into, when it was one of its
/// counts, as its `hookrt.toml` setting (`instances`, `memories`, `tables`),
/// and the count it reached. Wasmtime says so only in words ("resource
/// limit exceeded: instance count too high at 17"), which name neither.
pub(crate) fn count_limit(err: &wasmtime::Error) -> Option<(&'static str, u64)> {
    let text = format!("{err:#}");
    let rest = text.split("resource limit exceeded: ").nth(1)?;
    let (what, at) = rest.split_once(" count too high at ")?;
    let setting = match what {
        "instance" => "instances",
        "memory" => "memories",
        "table" => "tables",
        _ => return None,
    };
    let reached = at
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((setting, reached))
}

/// A short, single-line description of a failed call (no backtrace).
pub(crate) fn describe(err: &wasmtime::Error) -> String {
    let text = match err.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => format!("{err:#}"),
    };
    let line = text.lines().next().unwrap_or("").trim();
    line.chars().take(500).collect()
}
