//! hookrt as a script per event in the agent's hooks folder
//! ([`Shape::Scripts`]: Cline, which runs each file named after an event):
//! `<folder>/<Event>.sh`, `#!/bin/sh`, a line saying it is hookrt's, and
//! one `exec` of the command hook (Cline runs a script with its shell; a
//! binary in its place fails, and Cline lets the call run). Each file is
//! hookrt's alone: rewritten whole, removed for an event the folder's hooks
//! no longer take; a file of that name that is not hookrt's is refused, not
//! overwritten. The user's own hooks (`PreToolUse`, `PreToolUse.py`, …) sit
//! beside them and run too.

use anyhow::{Result, bail};

use super::agent_plugin::first_line;
use super::entry::{Agent, Transport};
use super::file::{Found, SettingsFile};

/// The line that marks a script as hookrt's.
const MARK: &str = "# hookrt: ";

/// One event's script: the file, as it was found, and its new text
/// (`None`: hookrt's old script goes).
pub(super) struct Script {
    pub(super) file: SettingsFile,
    pub(super) found: Found,
    pub(super) new: Option<String>,
}

impl Script {
    /// Whether writing it changes nothing.
    pub(super) fn unchanged(&self) -> bool {
        self.found.text.as_deref() == self.new.as_deref()
    }
}

/// The script of every event of `agent` in `folder`: hookrt's for each it
/// installs, none for the rest (an old one of hookrt's goes); an error
/// naming a file of that name that is not hookrt's where hookrt needs the
/// name (another event's is left alone).
pub(super) fn plan(
    agent: &Agent,
    transport: &Transport,
    folder: &SettingsFile,
) -> Result<Vec<Script>> {
    let label = agent.bridge.protocol().label;
    let installed: Vec<&str> = agent.installed().collect();
    let mut scripts = Vec::new();
    for (event, _) in agent.bridge.events() {
        let file = folder.child(&format!("{event}.sh"))?;
        let found = file.read()?;
        let wanted = installed.contains(event);
        if let Some(old) = found.text.as_deref().filter(|t| !is_ours(t)) {
            // Someone else's script of an event hookrt does not take: theirs.
            if !wanted {
                continue;
            }
            let head = first_line(old);
            bail!(
                "{} is not hookrt's (it begins `{head}`): {label} runs every hook file of an event, so put yours under another name (`{event}`, `{event}.py`) and run install again",
                file.path().display()
            );
        }
        let new = wanted.then(|| {
            format!(
                "#!/bin/sh\n{MARK}{label}'s {event} hook, written by `hookrt install --agent {}`; each install rewrites it.\nexec {}\n",
                agent.bridge.name(),
                transport.command_line(agent, event)
            )
        });
        if found.text.is_some() || new.is_some() {
            scripts.push(Script { file, found, new });
        }
    }
    Ok(scripts)
}

/// Whether `text` is a script hookrt wrote.
fn is_ours(text: &str) -> bool {
    text.lines().nth(1).is_some_and(|l| l.starts_with(MARK))
}
