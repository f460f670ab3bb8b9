//! `hookrt new DIR/hooks/SLUG --template notify`: a Rust hook that shows a
//! desktop notification when the agent needs the user (Claude Code's and
//! Gemini CLI's `Notification`) or ends a turn, and its `notify` grant added
//! to the folder's `hookrt.toml`, so that `hookrt check` and `hookrt test`
//! pass on what was written.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use hookrt::hooks::Slug;

use super::scaffold::{NewArgs, next_steps, refuse_taken, split, type_name};

/// Writes the hook and its grant, and says what to run next.
pub(super) fn new(args: &NewArgs) -> Result<()> {
    if !matches!(args.lang.as_str(), "rust" | "rs") {
        bail!("--template notify is written in Rust: drop --lang");
    }
    if args.as_crate {
        bail!("--template notify is one file (SLUG.rs): drop --crate");
    }
    if args.path.components().any(|c| c.as_os_str() == "subagents") {
        bail!("--template notify writes a primary agent's hook (AGENT/hooks/SLUG)");
    }
    let (agent, slug) = split(&args.path)?;
    let hooks_dir = args.path.parent().unwrap_or(Path::new("."));
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    refuse_taken(hooks_dir, name, &slug)?;
    let config = agent.join("hookrt.toml");
    let existing = match fs::read_to_string(&config) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", config.display())),
    };
    if existing.contains(&format!("[hooks.\"{slug}\"")) {
        bail!(
            "{} already configures `{slug}`: remove its tables, or pick another name",
            config.display()
        );
    }
    fs::create_dir_all(hooks_dir)?;
    let target = hooks_dir.join(format!("{name}.rs"));
    fs::write(&target, source(&slug, name))?;
    let separator = if existing.is_empty() || existing.ends_with("\n\n") {
        ""
    } else if existing.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    fs::write(&config, format!("{existing}{separator}{}", grant(&slug)))?;
    println!(
        "added [hooks.\"{slug}\".grants.notify] to {}",
        config.display()
    );
    next_steps(&agent, &slug, &target, None, &[]);
    Ok(())
}

/// The hook's tables: the `notify` grant at its defaults, written out, and a
/// deadline that leaves a notification's exchange its `timeout_ms`.
fn grant(slug: &Slug) -> String {
    format!(
        "# `{slug}` shows desktop notifications (docs/configuration.md, the `notify` grant).\n\
         [hooks.\"{slug}\"]\n\
         deadline_ms = 2500\n\n\
         [hooks.\"{slug}\".grants]\n\
         log = {{}}\n\n\
         [hooks.\"{slug}\".grants.notify]\n\
         per_minute = 6     # more in any minute are refused as rate-limited\n\
         timeout_ms = 2000  # one notification's exchange with the notifier\n"
    )
}

/// The hook's source.
fn source(slug: &Slug, name: &str) -> String {
    let ty = match type_name(name) {
        t if t.is_empty() => "Notify".to_owned(),
        t => t,
    };
    format!(
        r#"//! Hook `{slug}`: a desktop notification when the agent needs you (Claude Code's
//! and Gemini CLI's `Notification`) and when a turn ends. World 0.4.0, the `notify`
//! grant: `[hooks."{slug}".grants.notify]` in hookrt.toml sets its rate limit. A
//! rate-limited notification passes quietly; a notifier that cannot be reached fails
//! the delivery, so its record says why. The model's last message is never shown: it
//! may hold secrets.

use hookrt_sdk::notify::{{self, NotifyError, Urgency}};
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct {ty};

impl {ty} {{
    fn needs_you(&mut self, event: &Event, _cx: &Context) -> HookResult {{
        let data = event.data_json()?;
        let text = |key: &str| data.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let title = match text("title") {{
            "" => "Your agent needs you",
            title => title,
        }};
        show(title, text("message"), Urgency::Normal)
    }}

    fn turn_done(&mut self, event: &Event, _cx: &Context) -> HookResult {{
        let title = format!("{{}}: turn complete", event.coordinates().agent);
        show(&title, "Turn complete", Urgency::Low)
    }}
}}

fn show(title: &str, body: &str, urgency: Urgency) -> HookResult {{
    match notify::send(title, body, urgency) {{
        Ok(()) | Err(NotifyError::RateLimited) => Ok(()),
        Err(e) => Err(e.into()),
    }}
}}

hookrt_sdk::define_hook!({ty} {{
    "custom.claude.notification" => needs_you,
    "custom.gemini.notification" => needs_you,
    "observe:turn.stopping" => turn_done,
}});
"#
    )
}
