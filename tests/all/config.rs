//! Configuration: hookrt.toml keys, ranges and slugs, checked before anything runs.

use std::path::Path;

use hookrt::check;
use hookrt::hooks::Slug;
use hookrt::hooks::{Config, InstancePolicy};

use crate::common::TempAgent;

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

#[test]
fn hook_table_overrides_defaults_which_override_builtins() {
    let c = Config::parse(
        "[defaults]\nfuel = 7\ndeadline_ms = 9\n[hooks.\"a/b\"]\nfuel = 11\ninstance = \"reuse\"\n",
        Path::new("hookrt.toml"),
    )
    .unwrap();
    let ab = c.settings_for(&hookrt::Scope::Primary, &Slug::parse("a/b").unwrap());
    assert_eq!(
        (ab.limits.fuel, ab.limits.deadline_ms, ab.instance),
        (11, 9, InstancePolicy::Reuse)
    );
    let other = c.settings_for(&hookrt::Scope::Primary, &Slug::parse("other").unwrap());
    assert_eq!(
        (other.limits.fuel, other.limits.deadline_ms, other.instance),
        (7, 9, InstancePolicy::Fresh)
    );
    assert_eq!(
        other.limits.memory_bytes,
        hookrt::sandbox::DEFAULT_MEMORY_BYTES
    );
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
