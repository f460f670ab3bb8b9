//! `hookrt init DIR [--pack NAME,…]`: a new agent folder with packs
//! switched on: `hookrt.toml` with each pack's table and its settings as
//! comments, and the lock (a folder of packs only needs no `hooks/`).
//! Without `--pack`, a terminal is asked which packs; anything else gets
//! the gates (`DEFAULT_PACKS`). Nothing is overwritten without `--force`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hookrt::hooks::{CONFIG_FILE, LOCK_FILE, PACKS, Pack};

use crate::commands::lock::LockArgs;
use crate::loading::Loading;

/// The packs `init` switches on when nobody chose: the ones that gate.
const DEFAULT_PACKS: &[&str] = &["safe-shell", "protect-paths", "secrets"];

/// Arguments of `hookrt init`.
#[derive(clap::Args)]
pub(crate) struct InitArgs {
    /// The agent folder to make.
    pub dir: PathBuf,
    /// Packs to switch on, by name (`--pack safe-shell,secrets`); docs/packs/ lists them.
    #[arg(long = "pack", value_name = "NAME,...", value_delimiter = ',')]
    pub packs: Vec<String>,
    /// Replace an existing hookrt.toml (and hookrt.lock) in DIR.
    #[arg(long)]
    pub force: bool,
    /// Do not lock the folder (`hookrt lock DIR` does it later).
    #[arg(long)]
    pub no_lock: bool,
}

impl InitArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        let packs = self.chosen()?;
        let config = self.dir.join(CONFIG_FILE);
        for existing in [config.clone(), self.dir.join(LOCK_FILE)] {
            if existing.exists() && !self.force {
                bail!(
                    "{} exists; nothing was written (pass --force to replace hookrt.toml and hookrt.lock, or choose a new folder)",
                    existing.display()
                );
            }
        }
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        hookrt::hooks::replace_file(&config, config_text(&packs).as_bytes())
            .with_context(|| format!("cannot write {}", config.display()))?;
        let names: Vec<&str> = packs.iter().map(|p| p.name).collect();
        println!(
            "wrote {} with the packs {}",
            config.display(),
            names.join(", ")
        );
        let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
        if !self.no_lock {
            let code = LockArgs {
                dir: self.dir.clone(),
            }
            .execute(loading)?;
            if code != ExitCode::SUCCESS {
                return Ok(code);
            }
        }
        let dir = self.dir.display();
        println!(
            "next: `hookrt install --agent claude-code {dir}` (or codex, gemini, cursor, copilot); `hookrt audit {dir}` shows what each pack may do"
        );
        Ok(ExitCode::SUCCESS)
    }

    /// The packs asked for, asked at a terminal, or the default ones.
    fn chosen(&self) -> Result<Vec<&'static Pack>> {
        let names: Vec<String> = if !self.packs.is_empty() {
            self.packs.clone()
        } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            ask()?
        } else {
            DEFAULT_PACKS.iter().map(|s| s.to_string()).collect()
        };
        let mut packs: Vec<&'static Pack> = Vec::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let Some(pack) = PACKS.iter().copied().find(|p| p.name == name) else {
                let all: Vec<&str> = PACKS.iter().map(|p| p.name).collect();
                bail!(
                    "there is no pack `{name}`; the packs are {} (docs/packs/)",
                    all.join(", ")
                );
            };
            if !packs.iter().any(|p| p.name == pack.name) {
                packs.push(pack);
            }
        }
        if packs.is_empty() {
            bail!("no pack chosen; name at least one with --pack");
        }
        Ok(packs)
    }
}

/// Asks at the terminal which packs to switch on: numbers or names.
fn ask() -> Result<Vec<String>> {
    let mut err = std::io::stderr();
    writeln!(err, "Which packs should this folder switch on?")?;
    for (i, p) in PACKS.iter().enumerate() {
        writeln!(err, "  {}. {:<14} {}", i + 1, p.name, p.summary)?;
    }
    let defaults: Vec<String> = PACKS
        .iter()
        .enumerate()
        .filter(|(_, p)| DEFAULT_PACKS.contains(&p.name))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    write!(
        err,
        "Numbers or names, comma-separated [{}]: ",
        defaults.join(",")
    )?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let picked = if line.trim().is_empty() {
        defaults.join(",")
    } else {
        line
    };
    Ok(picked
        .split(',')
        .map(|s| {
            let s = s.trim();
            match s.parse::<usize>() {
                Ok(n) if (1..=PACKS.len()).contains(&n) => PACKS[n - 1].name.to_owned(),
                _ => s.to_owned(),
            }
        })
        .collect())
}

/// `hookrt.toml` for `packs`: each one's table, its settings as comments.
fn config_text(packs: &[&Pack]) -> String {
    let mut text = String::from(
        "# hookrt configuration, written by `hookrt init`. Each [packs.NAME] table switches\n\
         # on a pack that ships with hookrt; its settings (commented below, with their\n\
         # defaults) are on docs/packs/NAME.md. Your own hooks go in hooks/ (`hookrt new`).\n\
         # After an edit, `hookrt lock DIR` pins the folder again.\n",
    );
    for pack in packs {
        text.push_str(&format!(
            "\n# {}\n[packs.{}]\n{}{}",
            pack.summary, pack.name, pack.required, pack.example
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_written_configuration_switches_on_each_pack_and_parses() {
        let packs: Vec<&Pack> = PACKS.to_vec();
        let text = config_text(&packs);
        for pack in &packs {
            assert!(
                text.contains(&format!("\n[packs.{}]\n", pack.name)),
                "{}",
                pack.name
            );
        }
        // Each pack's settings, commented, are settings it takes.
        let uncommented: String = text
            .lines()
            .map(|l| {
                if l.starts_with("# ") && l.contains(" = ") {
                    &l[2..]
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        hookrt::hooks::Config::parse(&uncommented, Path::new(CONFIG_FILE))
            .expect("the examples are settings");
        hookrt::hooks::Config::parse(&text, Path::new(CONFIG_FILE)).expect("hookrt takes it");
    }
}
