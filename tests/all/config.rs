//! Configuration: hookrt.toml keys, ranges and slugs, checked before anything runs.

use std::path::Path;

use hookrt::check;
use hookrt::hooks::Slug;
use hookrt::hooks::{Config, InstancePolicy};

use crate::common::TempAgent;
use crate::markdown::table_after;

fn parse_err(text: &str) -> Vec<String> {
    Config::parse(text, Path::new("hookrt.toml"))
        .expect_err("invalid")
        .0
        .into_iter()
        .map(|p| p.message)
        .collect()
}

#[test]
fn unknown_key_names_the_key_and_line() {
    let errs = parse_err("[defaults]\nfuel = 10\nfule = 3\n");
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("line 3") && errs[0].contains("unknown field `fule`"),
        "{errs:?}"
    );
}

#[test]
fn zero_and_oversized_limits_are_refused_together() {
    let errs = parse_err("[defaults]\nfuel = 0\n[hooks.audit]\nmemory_mib = 999999\n");
    assert_eq!(
        errs,
        [
            "[defaults] fuel = 0",
            "[hooks.\"audit\"] memory_mib = 999999 is above the maximum 4096"
        ]
    );
}

fn hook(slug: &str, kind: hookrt::hooks::SourceKind) -> hookrt::hooks::DiscoveredHook {
    hookrt::hooks::DiscoveredHook {
        slug: Slug::parse(slug).unwrap(),
        kind,
        path: Path::new("hooks").join(slug),
        scope: hookrt::Scope::Primary,
    }
}

#[test]
fn hook_table_overrides_defaults_which_override_builtins() {
    use hookrt::hooks::SourceKind::SingleFile;
    let c = Config::parse(
        "[defaults]\nfuel = 7\ndeadline_ms = 9\n[hooks.\"a/b\"]\nfuel = 11\ninstance = \"reuse\"\n",
        Path::new("hookrt.toml"),
    )
    .unwrap();
    let ab = c.settings_for(&hook("a/b", SingleFile));
    assert_eq!(
        (ab.limits.fuel, ab.limits.deadline_ms, ab.instance),
        (11, 9, InstancePolicy::Reuse)
    );
    let other = c.settings_for(&hook("other", SingleFile));
    assert_eq!(
        (other.limits.fuel, other.limits.deadline_ms, other.instance),
        (7, 9, InstancePolicy::Fresh)
    );
    assert_eq!(
        other.limits.memory_bytes,
        hookrt::sandbox::DEFAULT_MEMORY_BYTES
    );
}

/// A Python hook's interpreter needs more core instances than a Rust hook
/// may have: its default is higher, a Rust hook's is not, and `instances`
/// set in `[defaults]` or its table still wins.
#[test]
fn a_python_hook_defaults_to_room_for_its_interpreter_and_nothing_else_widens() {
    use hookrt::hooks::SourceKind::{Python, SingleFile, TypeScript};
    let c = Config::parse("[hooks.small]\ninstances = 40\n", Path::new("hookrt.toml")).unwrap();
    let instances = |slug, kind| c.settings_for(&hook(slug, kind)).limits.instances;
    assert_eq!(instances("py", Python), hookrt::sandbox::PYTHON_INSTANCES);
    assert_eq!(
        instances("rs", SingleFile),
        hookrt::sandbox::DEFAULT_INSTANCES
    );
    assert_eq!(
        instances("ts", TypeScript),
        hookrt::sandbox::DEFAULT_INSTANCES
    );
    assert_eq!(instances("small", Python), 40);
    let c = Config::parse("[defaults]\ninstances = 48\n", Path::new("hookrt.toml")).unwrap();
    assert_eq!(c.settings_for(&hook("py", Python)).limits.instances, 48);
}

#[test]
fn slugs_that_name_no_hook_are_refused_with_a_suggestion() {
    let agent = TempAgent::new()
        .file("hooks/audit.rs", "")
        .config("order = [\"audti\"]\n[hooks.\"observability/metric\"]\nfuel = 5\n");
    let errs: Vec<String> = check(agent.path())
        .expect_err("unknown slugs")
        .0
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(
        errs,
        [
            "`order` names `audti`, but no hook has that slug (did you mean `audit`?)",
            "[hooks.\"observability/metric\"] names `observability/metric`, but no hook has that slug",
        ]
    );
}

#[test]
fn discovery_and_config_problems_are_reported_together() {
    let agent = TempAgent::new()
        .file("hooks/Bad.rs", "")
        .config("bogus = 1\n");
    let problems = check(agent.path()).expect_err("both broken").0;
    assert_eq!(problems.len(), 2, "{problems:#?}");
}

/// The keys the parser takes in one table of hookrt.toml, read off its own
/// refusal of a key it does not know (serde lists what it expected).
fn keys_taken(table: &str) -> Vec<String> {
    let errs = parse_err(&format!("{table}\nnot_a_key_of_hookrt = 1\n"));
    let message = errs.first().expect("an unknown key is refused");
    let expected = message
        .split("expected one of ")
        .nth(1)
        .or_else(|| message.split("expected ").nth(1))
        .unwrap_or_else(|| panic!("the refusal lists the keys: {message}"));
    let mut keys: Vec<String> = expected
        .split(['`', '\n'])
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    keys.sort();
    keys
}

/// The rows of the first table after `heading` in docs/configuration.md.
fn reference_rows(heading: &str) -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(crate::common::repo().join("docs/configuration.md"))
        .expect("docs/configuration.md");
    let rows = table_after(&doc, heading);
    assert!(
        !rows.is_empty(),
        "no table after {heading:?} in docs/configuration.md"
    );
    rows
}

/// The keys the table under `heading` documents: the first backticked word
/// of each row (`[defaults]` and `[hooks."slug"]` rows as `defaults` and
/// `hooks`).
fn keys_documented(heading: &str) -> Vec<String> {
    let mut keys: Vec<String> = reference_rows(heading)
        .iter()
        .filter_map(|row| row[0].split('`').nth(1).map(str::to_owned))
        .map(|k| {
            k.trim_start_matches('[')
                .split(['.', ']'])
                .next()
                .unwrap_or(&k)
                .to_owned()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Every key of hookrt.toml is declared once, in the parser: the reference
/// tables of docs/configuration.md list exactly the keys it takes, top level
/// and per hook, so a key added to one and not the other fails here.
#[test]
fn the_configuration_reference_lists_exactly_the_keys_the_parser_takes() {
    assert_eq!(
        keys_documented("## Structure"),
        keys_taken(""),
        "docs/configuration.md's Structure table against the top-level keys"
    );
    assert_eq!(
        keys_documented("## Per-hook keys"),
        keys_taken("[defaults]"),
        "docs/configuration.md's Per-hook keys table against [defaults]"
    );
    assert_eq!(
        keys_taken("[defaults]"),
        keys_taken("[hooks.some_hook]"),
        "[defaults] and [hooks.\"slug\"] take the same keys"
    );
}

/// The Maximum column of docs/configuration.md's per-hook table is the
/// parser's range check: each documented maximum is taken, one more refused.
#[test]
fn every_documented_maximum_is_the_parsers_bound() {
    let mut checked = 0;
    for cells in reference_rows("## Per-hook keys") {
        let key = cells[0].split('`').nth(1).expect("a key");
        let Some(max) = cells[2].split('`').nth(1) else {
            continue;
        };
        let max: u64 = max.replace('_', "").parse().expect("a number");
        let at_max = Config::parse(
            &format!("[defaults]\n{key} = {max}\n"),
            Path::new("hookrt.toml"),
        );
        assert!(
            at_max.is_ok(),
            "{key} = {max} (the documented maximum) is refused: {at_max:?}"
        );
        let errs = parse_err(&format!("[defaults]\n{key} = {}\n", max + 1));
        assert!(
            errs.iter().any(|e| e.contains(key)),
            "{key} = {} (one over the documented maximum) is taken: {errs:?}",
            max + 1
        );
        checked += 1;
    }
    assert!(checked >= 12, "the table's maximums ({checked} checked)");
}
