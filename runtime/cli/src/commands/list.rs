//! The command list README.md and docs/README.md show, generated from the
//! commands' clap definitions (as ripgrep writes its docs from its flag
//! definitions) and the alias table: one row per command, its usage and
//! what it does, then every alias. A test holds both documents to it and
//! prints the list to paste when they differ.

use super::aliases::ALIASES;

/// The line before the list in a document.
pub(super) const BEGIN: &str = "<!-- The command list, generated from the commands' clap definitions (runtime/cli/src/commands/list.rs): edit those, not this. -->";
/// The line after it.
pub(super) const END: &str = "<!-- End of the command list. -->";

/// The list of `cli`'s commands as markdown, between [`BEGIN`] and [`END`].
pub(super) fn markdown(cli: &clap::Command) -> String {
    let mut cli = cli.clone();
    cli.build();
    let mut out = format!("{BEGIN}\n| command | what it does |\n|---|---|\n");
    for command in cli.get_subcommands() {
        rows(&mut out, command);
    }
    out.push_str("\nOptions every command takes:\n\n");
    for arg in cli.get_arguments().filter(|a| a.is_global_set()) {
        let mut names: Vec<String> = arg
            .get_short()
            .map(|c| format!("-{c}"))
            .into_iter()
            .collect();
        names.extend(arg.get_long().map(|l| format!("--{l}")));
        let value = arg
            .get_value_names()
            .map(|v| format!(" <{}>", v.join(" ")))
            .filter(|_| arg.get_action().takes_values())
            .unwrap_or_default();
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        out.push_str(&format!(
            "- `{}{value}`: {}\n",
            names.join(", "),
            help.trim()
        ));
    }
    out.push_str("\n| alias | stands for |\n|---|---|\n");
    for a in ALIASES {
        out.push_str(&format!(
            "| `hookrt {}` | `hookrt {}`: {} |\n",
            a.typed,
            a.stands_for,
            cell(a.why)
        ));
    }
    out.push_str(&format!(
        "\nEach command's options: `hookrt COMMAND --help`.\n{END}\n"
    ));
    out
}

/// `command`'s row, unless it only groups subcommands, then theirs.
fn rows(out: &mut String, command: &clap::Command) {
    if command.get_name() == "help" {
        return;
    }
    if !command.is_subcommand_required_set() {
        let usage = command.clone().render_usage().to_string();
        let usage = usage.lines().next().unwrap_or_default();
        let usage = usage.trim_start_matches("Usage:").trim();
        let about = command.get_about().map(ToString::to_string);
        let about = cell(about.as_deref().unwrap_or_default());
        // The first sentence: the rest is in `--help`.
        let about = about
            .split_once(". ")
            .map_or(about.as_str(), |(first, _)| first);
        out.push_str(&format!("| `{usage}` | {about} |\n"));
    }
    for sub in command.get_subcommands() {
        rows(out, sub);
    }
}

/// Text as one markdown table cell.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The list in `document` (between [`BEGIN`] and [`END`]), if it has one.
pub(super) fn in_document(document: &str) -> Option<&str> {
    let start = document.find(BEGIN)?;
    let end = document[start..].find(END)? + start + END.len() + 1;
    document.get(start..end)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::{CommandFactory, Parser};

    use super::*;

    /// The repository's root.
    fn repo() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    #[test]
    fn readme_and_the_docs_show_the_command_list_clap_defines() {
        let list = markdown(&crate::Cli::command());
        let update = std::env::var_os("HOOKRT_UPDATE_DOCS").is_some();
        let mut stale = Vec::new();
        for doc in ["README.md", "docs/README.md"] {
            let path = repo().join(doc);
            let text = std::fs::read_to_string(&path).unwrap();
            let Some(shown) = in_document(&text) else {
                panic!("{doc} has no command list (a line {BEGIN})");
            };
            if shown == list {
                continue;
            }
            if update {
                std::fs::write(&path, text.replacen(shown, &list, 1)).unwrap();
            } else {
                stale.push(doc);
            }
        }
        assert!(
            stale.is_empty(),
            "{stale:?} show another command list than the commands define; run this test \
             with HOOKRT_UPDATE_DOCS=1 to write it, or paste:\n{list}"
        );
    }

    #[test]
    fn the_list_has_a_row_per_command_and_subcommand() {
        let list = markdown(&crate::Cli::command());
        for usage in [
            "`hookrt check [OPTIONS] <DIR>`",
            "`hookrt journal retry",
            "`hookrt journal redrive [OPTIONS] <PATH>`",
            "`hookrt audit coverage [OPTIONS] <JOURNAL>`",
            "`hookrt claude install [OPTIONS] <DIR>`",
            "`hookrt keygen [OPTIONS] --out <FILE>`",
        ] {
            assert!(list.contains(usage), "no {usage} in:\n{list}");
        }
        assert!(!list.contains("`hookrt journal [OPTIONS]"), "{list}");
        assert!(!list.contains("hookrt help"), "{list}");
    }

    #[test]
    fn every_alias_clap_knows_is_in_the_table_and_every_one_parses() {
        let mut cli = crate::Cli::command();
        cli.build();
        let mut known = Vec::new();
        aliases_of(&cli, "", &mut known);
        for (path, alias) in &known {
            assert!(
                ALIASES
                    .iter()
                    .any(|a| a.typed.starts_with(path.as_str()) && a.typed.contains(alias.as_str())),
                "`hookrt {path}` answers to `{alias}`, which commands/aliases.rs does not list"
            );
        }
        assert!(known.len() >= 3, "{known:?}");
        for a in ALIASES {
            for line in [a.typed, a.stands_for] {
                // What is in brackets is optional: left out.
                let mut depth = 0;
                let words = line.split_whitespace().filter(|w| {
                    depth += usize::from(w.starts_with('['));
                    let keep = depth == 0;
                    depth -= usize::from(w.ends_with(']'));
                    keep
                });
                let argv = std::iter::once("hookrt").chain(words);
                if let Err(e) = crate::Cli::try_parse_from(argv) {
                    panic!("`hookrt {line}` does not parse: {e}");
                }
            }
        }
    }

    /// Every (command path, alias) under `command`, of commands and flags.
    fn aliases_of(command: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        for arg in command.get_arguments() {
            for alias in arg.get_all_aliases().into_iter().flatten() {
                out.push((path.to_owned(), format!("--{alias}")));
            }
        }
        for sub in command.get_subcommands() {
            let sub_path = format!(
                "{path}{}{}",
                if path.is_empty() { "" } else { " " },
                sub.get_name()
            );
            for alias in sub.get_all_aliases() {
                out.push((path.to_owned(), alias.to_owned()));
            }
            aliases_of(sub, &sub_path, out);
        }
    }
}
