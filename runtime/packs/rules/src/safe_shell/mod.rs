//! The `safe-shell` pack: destructive and exfiltrating shell commands, in
//! every agent's shell tool, refused (or asked about) by named rules, with
//! an allow list and patterns of the user's own. docs/packs/safe-shell.md.

use std::collections::BTreeMap;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::paths;
use crate::shell::{self, Simple};
use crate::{Answer, Invalid};

mod rules;

pub use rules::Rule;
use rules::{fork_bomb, pipeline_rules, recursive_delete, simple_rules};

/// `[packs.safe-shell]` in `hookrt.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// What a caught command gets: `"deny"` (the default) or `"ask"`.
    #[serde(default)]
    pub answer: Answer,
    /// Rules switched off, by name.
    #[serde(default)]
    pub disable: Vec<Rule>,
    /// Regular expressions: a command whose text (its words joined by single
    /// spaces; a pipeline's commands joined by ` | `) matches one passes
    /// every rule.
    #[serde(default)]
    pub allow: Vec<String>,
    /// More commands to catch: a name = a regular expression over a
    /// command's text.
    #[serde(default)]
    pub deny: BTreeMap<String, String>,
}

/// What one rule found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's name (or `deny.NAME` for a pattern of the settings).
    pub rule: String,
    /// Why, naming what was seen.
    pub reason: String,
}

/// The settings with their expressions compiled.
#[derive(Debug, Clone)]
pub struct Checker {
    settings: Settings,
    allow: Vec<Regex>,
    deny: Vec<(String, Regex)>,
}

impl Checker {
    /// Compiles the settings' expressions, or says which one is wrong.
    pub fn new(settings: Settings) -> Result<Checker, Invalid> {
        let compile = |key: String, pattern: &str| {
            Regex::new(pattern).map_err(|e| {
                Invalid::new(&key, format!("`{key}` is not a regular expression: {e}"))
            })
        };
        let allow = settings
            .allow
            .iter()
            .enumerate()
            .map(|(i, p)| compile(format!("allow[{i}]"), p))
            .collect::<Result<_, _>>()?;
        let deny = settings
            .deny
            .iter()
            .map(|(name, p)| Ok((name.clone(), compile(format!("deny.{name}"), p)?)))
            .collect::<Result<_, Invalid>>()?;
        Ok(Checker {
            settings,
            allow,
            deny,
        })
    }

    /// What the pack answers: `None` to pass.
    pub fn answer(&self) -> Answer {
        self.settings.answer
    }

    /// The findings in `command`, run in `cwd` of the project at `root`.
    pub fn check(&self, command: &str, cwd: Option<&str>, root: Option<&str>) -> Vec<Finding> {
        let line = shell::parse(command);
        let mut found = Vec::new();
        let mut push = |rule: &str, text: &str, reason: String| {
            let off = self.settings.disable.iter().any(|r| r.name() == rule);
            if !off && !self.allow.iter().any(|a| a.is_match(text)) {
                found.push(Finding {
                    rule: rule.into(),
                    reason,
                });
            }
        };
        if line.any_opaque() {
            push(
                Rule::PipeToShell.name(),
                command,
                "the command nests shells too deep to be read".into(),
            );
        }
        if fork_bomb(command) {
            push(Rule::DiskWipe.name(), command, "a fork bomb".into());
        }
        for l in line.lines() {
            let mut cwd = cwd.map(str::to_owned);
            for (i, c) in l.commands.iter().enumerate() {
                let text = c.text();
                if c.name() == "cd" {
                    cwd = paths::cd(c.program().get(1).map(|w| w.text.as_str()), cwd.as_deref());
                }
                let before = if c.piped {
                    l.commands.get(i.wrapping_sub(1))
                } else {
                    None
                };
                if let Some(r) = recursive_delete(c, before, cwd.as_deref(), root) {
                    push(Rule::RecursiveDelete.name(), &text, r);
                }
                for (rule, reason) in simple_rules(c) {
                    push(rule.name(), &text, reason);
                }
                for (name, _) in self.deny.iter().filter(|(_, re)| re.is_match(&text)) {
                    let reason = format!("`{text}` matches the pattern `{name}` of the settings");
                    push(&format!("deny.{name}"), &text, reason);
                }
            }
            for p in l.pipelines() {
                let text = p.iter().map(Simple::text).collect::<Vec<_>>().join(" | ");
                for (rule, reason) in pipeline_rules(p) {
                    push(rule.name(), &text, reason);
                }
            }
        }
        found.sort_by_key(|f| {
            Rule::ALL
                .iter()
                .position(|r| r.name() == f.rule)
                .unwrap_or(usize::MAX)
        });
        found.dedup();
        found
    }
}

#[cfg(test)]
mod tests;
