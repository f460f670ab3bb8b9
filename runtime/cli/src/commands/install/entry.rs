//! hookrt's entry in an agent's hook configuration: what `install` knows
//! of an agent (its `Protocol`'s [`Install`]), how the agent reaches
//! hookrt ([`Transport`]: a command per event or `hookrt serve`), the entry
//! of each event, and how an entry is known as hookrt's.

use std::collections::BTreeSet;

use hookrt::front::bridge::Bridge;
use hookrt::front::bridge::protocol::{CommandForm, FailClosed, Install, Shape};
use serde_json::{Map, Value, json};

use super::pin::Pinned;

/// What a command hook's `--deadline-ms` is, and its timeout (seconds).
pub(super) const COMMAND_DEADLINE_MS: u64 = 10_000;
pub(super) const COMMAND_TIMEOUT_S: u64 = 15;
/// A gate's `budget_ms` over HTTP, and the entry's timeout (seconds).
pub(super) const HTTP_BUDGET_MS: u64 = 8_000;
pub(super) const HTTP_TIMEOUT_S: u64 = 10;
/// The environment variable the agent fills the bearer token from.
pub(super) const TOKEN_ENV: &str = "HOOKRT_TOKEN";

/// What `install` needs to know of an agent: its [`Install`], from its
/// `Protocol`.
pub(super) struct Agent {
    pub(super) bridge: Bridge,
    pub(super) install: &'static Install,
    /// The events the folder's hooks need (`needed.rs`); `None`: all.
    pub(super) only: Option<BTreeSet<&'static str>>,
}

impl Agent {
    /// Every event of `bridge`; an error where no file names hookrt for
    /// it (an inference hook, set in an admin console).
    pub(super) fn of(bridge: Bridge) -> anyhow::Result<Agent> {
        let Some(install) = &bridge.protocol().install else {
            anyhow::bail!(
                "{} are not set in a file hookrt can write: point them at `hookrt serve`'s route {} (docs/agents.md)",
                bridge.protocol().label,
                bridge.route()
            );
        };
        Ok(Agent {
            bridge,
            install,
            only: None,
        })
    }

    /// Only the events in `only` (all when `None`).
    pub(super) fn only(self, only: Option<BTreeSet<&'static str>>) -> Agent {
        Agent { only, ..self }
    }

    /// hookrt serve's route for the agent's `http` hooks, if it has them
    /// (the others forward to theirs from the command hook).
    pub(super) fn route(&self) -> Option<String> {
        self.install.http_hooks.then(|| self.bridge.route())
    }

    /// The events hookrt becomes the hook of: every one of the pinned
    /// release's the folder needs, but `Install::not_installed`.
    pub(super) fn installed(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.bridge
            .events()
            .iter()
            .map(|(event, _)| *event)
            .filter(|e| !self.install.not_installed.contains(e))
            .filter(|e| self.only.as_ref().is_none_or(|only| only.contains(e)))
    }
}

/// How the agent reaches hookrt: a command hook per event on the agent
/// folder (the thin client `hookrt-hook` or `hookrt hook`, both through
/// the folder's resident service; or, with `--no-service`, a process that
/// decides itself), or `hookrt serve` at a base URL.
pub(super) struct Transport {
    pub(super) hookrt: String,
    /// The thin client beside `hookrt`, when there is one: the command
    /// hooks run it, lighter to start (docs/service.md).
    pub(super) thin: Option<String>,
    pub(super) dir: String,
    pub(super) http: Option<String>,
    /// `--no-service`: each command hook decides in its own process.
    pub(super) no_service: bool,
    pub(super) lock: Pinned,
    /// The command hooks' `--record FILE`.
    pub(super) record: Option<String>,
}

/// `text` quoted for a POSIX shell. A plugin's root, `${VAR}/rest` with
/// `rest` of safe characters, is double-quoted: the shell expands the
/// variable (where the agent sets it rather than writes its value in) and
/// splits nothing.
fn quoted(text: &str) -> String {
    if let Some((var, rest)) = text.strip_prefix("${").and_then(|t| t.split_once('}'))
        && !var.is_empty()
        && var.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
    {
        return format!("\"{text}\"");
    }
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

impl Transport {
    /// The thin client, where the command hooks run it: through the
    /// service, with nothing only `hookrt hook` does (`--http`,
    /// `--record`).
    fn thin(&self) -> Option<&str> {
        self.thin
            .as_deref()
            .filter(|_| self.http.is_none() && !self.no_service && self.record.is_none())
    }

    pub(super) fn describe(&self, agent: &Agent) -> String {
        let command = format!(
            "{} --agent {}{} {}{}",
            if self.thin().is_some() {
                "hookrt-hook"
            } else {
                "hookrt hook"
            },
            agent.bridge.name(),
            if self.no_service { " --no-service" } else { "" },
            self.dir,
            self.lock
                .args()
                .iter()
                .fold(String::new(), |line, a| line + " " + a)
        );
        let command_only = agent.install.command_only;
        let plugin = matches!(agent.install.shape, Shape::Plugin(_));
        let scripts = agent.install.shape == Shape::Scripts;
        match (&self.http, agent.route()) {
            (Some(url), None) if scripts => {
                format!("each script runs {command} --http {url}, token from ${TOKEN_ENV}")
            }
            _ if scripts => format!("each script runs {command}"),
            (Some(url), None) if plugin => format!(
                "the plugin posts to {url}{}, token from ${TOKEN_ENV}",
                agent.bridge.route()
            ),
            _ if plugin => format!("the plugin runs {command}"),
            (Some(url), None) => format!("{command} --http {url}, token from ${TOKEN_ENV}"),
            (Some(url), Some(route)) if command_only.is_empty() => {
                format!("{url}{route}, token from ${TOKEN_ENV}")
            }
            (Some(url), Some(route)) => format!(
                "{url}{route}, token from ${TOKEN_ENV}; {} by {command}",
                command_only.join(" and ")
            ),
            _ => command,
        }
    }

    /// The program of the command hooks: the thin client, else `hookrt`.
    fn program(&self) -> &str {
        self.thin().unwrap_or(&self.hookrt)
    }

    /// The arguments of the command hook of `event`.
    fn args(&self, agent: &Agent, event: &str) -> Vec<String> {
        let mut args = Vec::new();
        if self.thin().is_none() {
            args.push("hook".to_owned());
        }
        args.extend(["--agent".to_owned(), agent.bridge.name().to_owned()]);
        if agent.bridge.protocol().event_field.is_none() {
            args.extend(["--event".to_owned(), event.to_owned()]);
        }
        args.extend([
            self.dir.clone(),
            "--deadline-ms".to_owned(),
            COMMAND_DEADLINE_MS.to_string(),
        ]);
        // An agent whose hooks can be `http` runs a command only for the
        // events that cannot (`Install::command_only`): those forward too,
        // and `hookrt serve --record` records them with the rest.
        let forwarded_by_http_hooks = self.http.is_some() && agent.install.http_hooks;
        if let Some(url) = &self.http {
            args.extend(["--http".to_owned(), url.clone()]);
        }
        if self.no_service {
            args.push("--no-service".to_owned());
        }
        args.extend(self.lock.args());
        if let Some(file) = self.record.as_ref().filter(|_| !forwarded_by_http_hooks) {
            args.extend(["--record".to_owned(), file.clone()]);
        }
        args
    }

    /// The command hook as argv, for an agent whose input names its event
    /// (a plugin runs it for every event).
    pub(super) fn argv(&self, agent: &Agent) -> Vec<String> {
        debug_assert!(agent.bridge.protocol().event_field.is_some());
        std::iter::once(self.program().to_owned())
            .chain(self.args(agent, ""))
            .collect()
    }

    /// The command hook of `event` as a shell command line.
    pub(super) fn command_line(&self, agent: &Agent, event: &str) -> String {
        std::iter::once(self.program())
            .chain(self.args(agent, event).iter().map(String::as_str))
            .map(quoted)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The hook entry of `event`: `http` on the agent's route with
    /// `--http` where the agent's hooks can be, else the command hook.
    pub(super) fn hook(&self, agent: &Agent, event: &str) -> Value {
        let install = agent.install;
        let gate = agent.bridge.is_gate(event);
        let route = agent
            .route()
            .filter(|_| !install.command_only.contains(&event));
        let (timeout_key, unit) = install.timeout;
        let mut hook = Map::new();
        if let Some((url, route)) = self.http.as_ref().zip(route) {
            let budget = if gate {
                format!("&budget_ms={HTTP_BUDGET_MS}")
            } else {
                String::new()
            };
            hook.insert("type".into(), json!("http"));
            hook.insert(
                "url".into(),
                json!(format!("{url}{route}?event={event}{budget}")),
            );
            hook.insert(
                "headers".into(),
                json!({"Authorization": format!("Bearer ${TOKEN_ENV}")}),
            );
            hook.insert("allowedEnvVars".into(), json!([TOKEN_ENV]));
            hook.insert(timeout_key.into(), json!(unit.of(HTTP_TIMEOUT_S)));
        } else {
            if install.typed {
                hook.insert("type".into(), json!("command"));
            }
            if let Some(name) = install.name {
                hook.insert("name".into(), json!(name));
            }
            match install.command {
                CommandForm::Args => {
                    hook.insert("command".into(), json!(self.program()));
                    hook.insert("args".into(), json!(self.args(agent, event)));
                }
                CommandForm::Line(key) => {
                    hook.insert(key.into(), json!(self.command_line(agent, event)));
                }
            }
            hook.insert(timeout_key.into(), json!(unit.of(COMMAND_TIMEOUT_S)));
        }
        match install.fail_closed.filter(|_| gate) {
            Some(FailClosed::Word(key, word)) => hook.insert(key.into(), json!(word)),
            Some(FailClosed::Flag(key)) => hook.insert(key.into(), json!(true)),
            None => None,
        };
        Value::Object(hook)
    }
}

/// Whether `hook` is one of hookrt's: a command running `hook --agent`,
/// `claude-hook` or the thin client `hookrt-hook --agent` (under the key
/// any agent's entries name their command line with, or `agent`'s), or an
/// `http` hook on one of hookrt's agent routes.
pub(super) fn is_ours(hook: &Value, agent: &Agent) -> bool {
    let args: Vec<&str> = hook["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let thin = hook["command"].as_str().is_some_and(|c| {
        std::path::Path::new(c)
            .file_name()
            .is_some_and(|n| n == "hookrt-hook")
    });
    let args = match args.first() {
        Some(&"claude-hook") => true,
        Some(&"hook") => args.contains(&"--agent"),
        _ => thin && args.contains(&"--agent"),
    };
    let agents = || Bridge::ALL.into_iter().chain([agent.bridge]);
    let line = agents()
        .filter_map(|b| match b.protocol().install.as_ref()?.command {
            CommandForm::Line(key) => Some(key),
            CommandForm::Args => None,
        })
        .any(|k| {
            hook[k].as_str().is_some_and(|c| {
                c.contains(" claude-hook ")
                    || ((c.contains(" hook --agent ") || c.contains("hookrt-hook --agent "))
                        && c.contains("--deadline-ms"))
            })
        });
    let http = hook["url"].as_str().is_some_and(|u| {
        agents()
            .filter(|b| b.protocol().install.as_ref().is_some_and(|i| i.http_hooks))
            .any(|b| u.contains(&b.route()))
    });
    args || line || http
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell() {
        assert_eq!(quoted("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(quoted("/my agents/it's"), "'/my agents/it'\\''s'");
        assert_eq!(quoted("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(quoted("${PLUGIN_ROOT}/agent"), "\"${PLUGIN_ROOT}/agent\"");
        assert_eq!(quoted("${X}/$(id)"), "'${X}/$(id)'");
        assert_eq!(quoted("${x}/a"), "'${x}/a'");
    }
}
