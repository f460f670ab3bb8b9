//! The packs' two crates, each in its order: `hookrt-pack-rules` (what the
//! packs judge) and `hookrt-packs` (the packs hookrt ships).

/// The packs' rules (`hookrt-pack-rules`): the reading of paths, globs,
/// shell commands and tools, then each pack's rules.
const PACK_RULES: &[&str] = &[
    "paths",
    "glob",
    "shell::command",
    "shell::reader",
    "shell",
    "tools",
    "safe_shell::rules",
    "safe_shell",
    "safe_shell::tests",
    "protect_paths",
    "secrets",
    "budget",
    "format_on_edit",
    "tests_at_stop",
    "notify",
    "audit_log",
];

/// The packs (`hookrt-packs`): reading settings, then each pack.
const PACKS: &[&str] = &[
    "settings",
    "safe_shell",
    "protect_paths",
    "secrets",
    "budget",
    "format_on_edit",
    "tests_at_stop",
    "notify",
    "notify_webhook",
    "audit_log",
];

#[test]
fn the_packs_import_only_from_earlier_modules() {
    super::check(&super::repo().join("runtime/packs/rules/src"), PACK_RULES);
    super::check(&super::repo().join("runtime/packs/src"), PACKS);
}
