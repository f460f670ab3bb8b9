//! Claude Code's inputs as its pinned package types them: the bridge's
//! events are `HOOK_EVENTS` of `sdk.d.ts`, in its order, and every input
//! fixture (tests/fixtures/claude/) is that event's `HookInput`, checked by
//! `tsc --strict`. A new pin that adds, drops or reorders an event, or
//! changes an input's fields, fails here until the bridge and the fixtures
//! follow it.

use crate::claude_code::type_check;
use crate::common::claude_fixture;

/// The TypeScript that holds the bridge's events to `HOOK_EVENTS` (same
/// names, same order) and each of `fixtures` to `HookInput`.
fn checks(events: &[&str], fixtures: &[(&str, String)]) -> String {
    let names: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
    let mut ts = format!(
        "import type {{ HookInput, HOOK_EVENTS }} from \"@anthropic-ai/claude-agent-sdk\";\n\n\
         // The bridge's events, as the package lists them.\n\
         export const events: typeof HOOK_EVENTS = [{}] as const;\n\
         export const listed: readonly [{}] = [] as unknown as typeof HOOK_EVENTS;\n\n\
         export const inputs: HookInput[] = [\n",
        names.join(", "),
        names.join(", ")
    );
    for (event, text) in fixtures {
        ts.push_str(&format!("  // {event}\n  {text},\n"));
    }
    ts.push_str("];\n");
    ts
}

#[test]
fn the_bridges_events_are_the_pinned_packages_and_every_input_fixture_is_its_hook_input() {
    let events: Vec<&str> = hookrt::front::bridge::Bridge::named("claude-code")
        .unwrap()
        .events()
        .iter()
        .map(|(e, _)| *e)
        .collect();
    let fixtures: Vec<(&str, String)> = events.iter().map(|e| (*e, claude_fixture(e))).collect();
    let ts = checks(&events, &fixtures);
    if let Err(said) = type_check(&ts) {
        panic!("the bridge or a fixture is not what the pinned package types:\n{said}\n{ts}");
    }
    // The checks can fail: an event the package does not list, a missing
    // one, and a fixture field it does not know are each refused.
    let mut extra = events.clone();
    extra.push("NoSuchEvent");
    assert!(
        type_check(&checks(&extra, &fixtures)).is_err(),
        "an extra event"
    );
    assert!(
        type_check(&checks(&events[1..], &fixtures)).is_err(),
        "a missing event"
    );
    let mut misspelt = fixtures.clone();
    misspelt[0].1 = misspelt[0].1.replace("\"tool_input\"", "\"toolInput\"");
    assert!(
        type_check(&checks(&events, &misspelt)).is_err(),
        "a misspelt input field"
    );
}
