//! `hookrt new AGENT/hooks/SLUG --template NAME [--lang rust|ts|py]`: a hook
//! for a common case, written in the language asked, with its entry (the
//! grant tables it needs) added to the folder's `hookrt.toml`. The hooks are
//! the files under `recipes/` (`__SLUG__` and `__TYPE__` filled in).

use std::fs;
use std::path::Path;

use anyhow::{Result, bail};
use hookrt::hooks::Slug;

use super::entry::Entry;
use super::scaffold::{NewArgs, Template, next_steps, refuse_taken, split, type_name};

/// What every recipe's entry starts with: its grants, in the table form.
const GRANTS: &str = "[{table}.grants]\nlog = {}\n\n";

impl Template {
    /// The hook's source in `ext`'s language, with `__SLUG__` and `__TYPE__`.
    fn source(self, ext: &str) -> &'static str {
        match (self, ext) {
            (Template::FormatOnEdit, "rs") => include_str!("recipes/format_on_edit.rs.tmpl"),
            (Template::FormatOnEdit, "ts") => include_str!("recipes/format_on_edit.ts.tmpl"),
            (Template::FormatOnEdit, _) => include_str!("recipes/format_on_edit.py.tmpl"),
            (Template::TestsAtStop, "rs") => include_str!("recipes/tests_at_stop.rs.tmpl"),
            (Template::TestsAtStop, "ts") => include_str!("recipes/tests_at_stop.ts.tmpl"),
            (Template::TestsAtStop, _) => include_str!("recipes/tests_at_stop.py.tmpl"),
            (Template::Notify, "rs") => include_str!("recipes/notify.rs.tmpl"),
            (Template::Notify, "ts") => include_str!("recipes/notify.ts.tmpl"),
            (Template::Notify, _) => include_str!("recipes/notify.py.tmpl"),
        }
    }

    /// The hook's entry in `hookrt.toml`, after its `[{table}]` line.
    fn entry(self) -> String {
        let table = match self {
            Template::FormatOnEdit => {
                "# What it runs on each file the agent edits (the `exec` grant, docs/configuration.md).\n\
                 # A folder whose hooks hold `exec` loads only as locked: `hookrt lock` it after a review.\n\
                 [{table}.grants.exec]\n\
                 timeout_ms = 15000\n\
                 env = [\"PATH\"]          # prettier is a node script: `env node` needs PATH\n\n\
                 [{table}.grants.exec.programs.format]\n\
                 # absolute, or found on PATH at load; e.g. \"rustfmt\" (args [\"{file}\"]),\n\
                 # \"ruff\" ([\"format\", \"{file}\"]), \"gofmt\" ([\"-w\", \"{file}\"])\n\
                 path = \"prettier\"\n\
                 args = [\"--write\", \"{file}\"]\n\
                 placeholders = { file = \"writable-path\" }   # the one file it may write\n"
            }
            Template::TestsAtStop => {
                "# What runs the project's tests (the `exec` grant, docs/configuration.md). They run\n\
                 # in the project under Landlock, which lets them read it but write nothing there.\n\
                 # A folder whose hooks hold `exec` loads only as locked: `hookrt lock` it after a review.\n\
                 [{table}.grants.exec]\n\
                 timeout_ms = 110000       # the whole process group is killed at it (at most 120000)\n\
                 processes = 64\n\
                 env = [\"PATH\"]\n\n\
                 [{table}.grants.exec.programs.tests]\n\
                 # absolute, or found on PATH at load; e.g. \"npm\" (args [\"test\"]), \"pytest\" ([\"-q\"])\n\
                 path = \"make\"\n\
                 args = [\"test\"]\n"
            }
            Template::Notify => {
                "# Its desktop notifications (the `notify` grant, docs/configuration.md).\n\
                 [{table}.grants.notify]\n\
                 per_minute = 6     # more in any minute are refused as rate-limited\n\
                 timeout_ms = 2000  # one notification's exchange with the notifier\n"
            }
        };
        let (deadline, within) = match self {
            Template::FormatOnEdit => (20_000, "the program's run (its timeout_ms)"),
            Template::TestsAtStop => (120_000, "the program's run (its timeout_ms)"),
            Template::Notify => (2_500, "a notification's exchange (its timeout_ms)"),
        };
        format!(
            "# The delivery's wall-clock limit: {within} happens inside it.\n\
             deadline_ms = {deadline}\n\n{GRANTS}{table}"
        )
    }

    /// What the next steps add for a template holding `exec`: the table to
    /// edit before the lock (a folder whose hooks hold `exec` loads only as
    /// locked); `None` for one that needs no lock.
    fn edit_hint(self) -> Option<&'static str> {
        match self {
            Template::FormatOnEdit => Some("the formatter it runs"),
            Template::TestsAtStop => Some("the program that runs the tests"),
            Template::Notify => None,
        }
    }
}

/// Writes the hook and its `hookrt.toml` entry, and says what to run next.
pub(super) fn new(args: &NewArgs, recipe: Template) -> Result<()> {
    let (ext, toolchain) = match args.lang.as_str() {
        "rust" | "rs" => ("rs", None),
        "ts" | "typescript" | "js" | "javascript" => ("ts", Some("js")),
        "py" | "python" => ("py", Some("py")),
        other => bail!("--lang {other}: unknown language; use `rust`, `ts` or `py`"),
    };
    if args.as_crate {
        bail!("--crate: a template writes one file (SLUG.{ext}); drop --crate");
    }
    let (agent, slug) = split(&args.path)?;
    let hooks_dir = args.path.parent().unwrap_or(Path::new("."));
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    refuse_taken(hooks_dir, name, &slug)?;
    let entry = Entry::prepare(&agent, &args.path, &slug, &recipe.entry())?;
    fs::create_dir_all(hooks_dir)?;
    let target = hooks_dir.join(format!("{name}.{ext}"));
    fs::write(&target, fill(recipe.source(ext), &slug, name))?;
    entry.write()?;
    let toolchain = toolchain
        .map(|t| format!("scripts/{t}-toolchain   # once per machine, from the hookrt checkout"));
    let lock = recipe.edit_hint().map(|hint| {
        format!(
            "hookrt lock {}   # after setting {hint} in {}: a folder whose hooks hold exec loads only as locked",
            agent.display(),
            entry.path.display()
        )
    });
    let first: Vec<&str> = toolchain.iter().chain(&lock).map(String::as_str).collect();
    next_steps(&agent, &slug, &target, &first, &[]);
    println!(
        "  {} holds [{}] and its grants",
        entry.path.display(),
        entry.table
    );
    Ok(())
}

/// The template with the slug and the type (class) name filled in.
fn fill(template: &str, slug: &Slug, name: &str) -> String {
    let ty = match type_name(name) {
        t if t.is_empty() => "MyHook".to_owned(),
        t => t,
    };
    template
        .replace("__SLUG__", slug.as_str())
        .replace("__TYPE__", &ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recipe_fills_each_language_and_its_entry_loads() {
        let slug = Slug::parse("fmt-on-edit").unwrap();
        for (recipe, grant) in [
            (Template::FormatOnEdit, "exec"),
            (Template::TestsAtStop, "exec"),
            (Template::Notify, "notify"),
        ] {
            for ext in ["rs", "ts", "py"] {
                let text = fill(recipe.source(ext), &slug, "fmt-on-edit");
                assert!(!text.contains("__"), "{recipe:?} {ext}: {text}");
                let table = format!("hooks.\"fmt-on-edit\".grants.{grant}");
                assert!(text.contains(&table), "{text}");
            }
            let toml = format!(
                "[hooks.\"x\"]\n{}",
                recipe.entry().replace("{table}", "hooks.\"x\"")
            );
            let parsed = hookrt::hooks::Config::parse(&toml, Path::new("hookrt.toml"));
            assert!(parsed.is_ok(), "{recipe:?}: {toml}");
        }
        assert!(
            fill(Template::FormatOnEdit.source("py"), &slug, "fmt-on-edit")
                .contains("class FmtOnEdit(Hook):")
        );
    }
}
