//! Every other name a command or flag answers to, in one table (as cargo's
//! `BUILTIN_ALIASES`): old names kept working, and Claude Code's names for
//! commands every agent has. The clap attributes take their names from the
//! constants here and [`super::Command::execute`] runs a command alias as
//! the command it stands for; the table says what each means for the
//! generated command list (`list.rs`), whose test also holds it to clap's
//! tree: an alias clap knows and the table does not list fails it.

/// One alias: how it is typed, what it stands for, and why it is kept.
#[cfg(test)]
pub(crate) struct Alias {
    /// The words, after `hookrt`, that name it (a flag: `run --workers`).
    pub typed: &'static str,
    /// What it means, after `hookrt`.
    pub stands_for: &'static str,
    /// Why it exists.
    pub why: &'static str,
}

/// `hookrt claude-hook DIR [--agent NAME]`.
pub(crate) const CLAUDE_HOOK: &str = "claude-hook";
/// `hookrt claude install DIR`.
pub(crate) const CLAUDE: &str = "claude";
/// `hookrt journal retry`.
pub(crate) const JOURNAL_RETRY: &str = "retry";
/// `--workers` of `hookrt run` and `hookrt serve`.
pub(crate) const WORKERS: &str = "workers";

/// Every alias.
#[cfg(test)]
pub(crate) const ALIASES: &[Alias] = &[
    Alias {
        typed: "claude-hook DIR [--agent NAME]",
        stands_for: "hook --agent claude-code DIR [--name NAME]",
        why: "Claude Code's command hook, as its settings written before `hook` name it",
    },
    Alias {
        typed: "claude install DIR",
        stands_for: "install --agent claude-code DIR",
        why: "Claude Code's install, as docs/claude-code.md names it",
    },
    Alias {
        typed: "journal retry J",
        stands_for: "journal redrive J",
        why: "`redrive`'s old name",
    },
    Alias {
        typed: "run DIR --events - --workers 4",
        stands_for: "run DIR --events - --threads 4",
        why: "`--threads`' old name (`run`, `serve`)",
    },
    Alias {
        typed: "serve DIR --workers 4",
        stands_for: "serve DIR --threads 4",
        why: "`--threads`' old name (`run`, `serve`)",
    },
];
