//! The hook's entry in its agent folder's `hookrt.toml`, which `hookrt new`
//! adds: a template's grants (its `exec` table), or the `on_failure` its
//! advice names for a hook that votes. The file is read, the entry appended
//! and the whole checked as hookrt loads it before anything is written: an
//! entry the file already holds, or a file that does not load, is refused
//! (issue 53, item 7).

use std::path::{Component, Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use hookrt::hooks::{CONFIG_FILE, Config, Slug, read_plain_file, replace_file};

/// An entry to add: the agent folder's `hookrt.toml` as it will be.
pub(crate) struct Entry {
    /// The file.
    pub path: PathBuf,
    /// The table's name, e.g. `hooks."fmt"` or `subagents."r".hooks."notes"`.
    pub table: String,
    text: String,
}

impl Entry {
    /// The entry of `slug` (written at `hook_path`, AGENT/hooks/SLUG or
    /// AGENT/subagents/ID/hooks/SLUG) with `body` (its keys and subtables,
    /// where `{table}` stands for the table's name), appended to `agent`'s
    /// `hookrt.toml` and checked as hookrt loads it.
    pub(crate) fn prepare(
        agent: &Path,
        hook_path: &Path,
        slug: &Slug,
        body: &str,
    ) -> Result<Entry> {
        let path = agent.join(CONFIG_FILE);
        let table = table_of(hook_path, slug);
        let before = read_plain_file(&path)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?
            .unwrap_or_default();
        let mut text = before.clone();
        if !text.is_empty() && !text.ends_with("\n\n") {
            text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
        }
        text.push_str(&format!("[{table}]\n{}", body.replace("{table}", &table)));
        if let Err(problems) = Config::parse(&text, &path) {
            if Config::parse(&before, &path).is_ok() {
                bail!(
                    "cannot add [{table}] to {}: {problems}\n  fix: the file already configures `{slug}`: remove that table, or pick another name",
                    path.display()
                );
            }
            bail!(
                "{} does not load as it is: {problems}\n  fix: correct it, then run `hookrt new` again",
                path.display()
            );
        }
        Ok(Entry { path, table, text })
    }

    /// Writes the file.
    pub(crate) fn write(&self) -> Result<()> {
        replace_file(&self.path, self.text.as_bytes())
            .map_err(|e| anyhow!("cannot write {}: {e}", self.path.display()))
    }
}

/// The entry of a hook that votes on `voting` (kinds that fail closed by
/// default): the `on_failure` the advice names, left for the author to
/// decide (commented), so `check` still asks until it is.
pub(crate) fn voting_body(voting: &[&str]) -> Option<String> {
    let (first, rest) = voting.split_first()?;
    let mut body = format!(
        "# It votes on {}: a failure (a trap, an error, a timeout) denies by default.\n\
         # Say so, or let a failure abstain (fail open):\n\
         # on_failure = \"deny\"   # or \"abstain\"\n",
        voting.join(", ")
    );
    if !rest.is_empty() {
        let per: Vec<String> = std::iter::once(format!("\"{first}\" = \"deny\""))
            .chain(rest.iter().map(|k| format!("\"{k}\" = \"abstain\"")))
            .collect();
        body.push_str(&format!(
            "# on_failure = {{ {} }}   # per subscription\n",
            per.join(", ")
        ));
    }
    Some(body)
}

/// Adds the entry of a hook that votes on `voting` ([`voting_body`]) and
/// says so; a hook that does not vote gets none. The hook is written
/// already: a file that cannot take the entry is a warning, not a failure.
pub(crate) fn add_voting(agent: &Path, hook_path: &Path, slug: &Slug, voting: &[&str]) {
    let Some(body) = voting_body(voting) else {
        return;
    };
    match Entry::prepare(agent, hook_path, slug, &body).and_then(|e| e.write().map(|()| e)) {
        Ok(e) => println!(
            "  {} holds [{}], on_failure commented out: decide it there",
            e.path.display(),
            e.table
        ),
        Err(e) => eprintln!("warning: {e}"),
    }
}

/// `hooks."SLUG"`, or `subagents."ID".hooks."SLUG"` for a subagent's hook.
fn table_of(hook_path: &Path, slug: &Slug) -> String {
    let parts: Vec<&std::ffi::OsStr> = hook_path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    let at = parts.iter().rposition(|p| *p == "hooks");
    match at {
        Some(at) if at >= 2 && parts[at - 2] == "subagents" => format!(
            "subagents.\"{}\".hooks.\"{slug}\"",
            parts[at - 1].to_string_lossy()
        ),
        _ => format!("hooks.\"{slug}\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subagents_hook_gets_its_scopes_table() {
        let slug = Slug::parse("notes").unwrap();
        assert_eq!(
            table_of(Path::new("a/subagents/r/hooks/notes"), &slug),
            "subagents.\"r\".hooks.\"notes\""
        );
        assert_eq!(
            table_of(Path::new("a/hooks/notes"), &slug),
            "hooks.\"notes\""
        );
    }

    #[test]
    fn an_entry_the_file_already_holds_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let slug = Slug::parse("guard").unwrap();
        let hook = dir.path().join("hooks/guard");
        let body = voting_body(&["actions.requested"]).unwrap();
        let entry = Entry::prepare(dir.path(), &hook, &slug, &body).unwrap();
        entry.write().unwrap();
        let written = std::fs::read_to_string(&entry.path).unwrap();
        assert!(
            written.starts_with("[hooks.\"guard\"]\n# It votes on actions.requested"),
            "{written}"
        );
        let again = Entry::prepare(dir.path(), &hook, &slug, &body)
            .err()
            .unwrap()
            .to_string();
        assert!(
            again.contains("cannot add [hooks.\"guard\"]") && again.contains("remove that table"),
            "{again}"
        );
        assert_eq!(std::fs::read_to_string(&entry.path).unwrap(), written);
    }
}
