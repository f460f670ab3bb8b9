//! What every `hookrt new` template shares: the arguments, the agent
//! folder and slug a path names, the subscriptions `--events` asks for, the
//! slug's file not taken yet, method and type names, and the next steps.

use std::fs;
use std::path::{Component, Path, PathBuf};

use anyhow::{Result, bail};
use hookrt::event::{GateRule, WILDCARD, gate_rule, handled_kind, is_subscribable, observed_kind};
use hookrt::hooks::Slug;
use hookrt::{EventClass, class_of};

/// Arguments of `hookrt new`.
#[derive(clap::Args)]
pub(crate) struct NewArgs {
    /// Where the hook goes: AGENT/hooks/SLUG (or AGENT/subagents/ID/hooks/SLUG);
    /// writes SLUG.rs, or SLUG/ as a crate with --crate.
    pub path: PathBuf,
    /// The hook's language: `rust`, `ts` (one SLUG.ts file, docs/typescript.md) or
    /// `py` (one SLUG.py file, docs/python.md).
    #[arg(long, default_value = "rust")]
    pub lang: String,
    /// The event kinds it handles, comma-separated: a kind, `observe:<kind>` to
    /// watch a decision, edit or gate event without a vote, `rewrite:<kind>` to
    /// vote on and rewrite a call's input, or `*` for every event.
    #[arg(long, value_delimiter = ',', default_value = "message.completed")]
    pub events: Vec<String>,
    /// Write a crate (SLUG/Cargo.toml, SLUG/src/lib.rs) instead of one file.
    #[arg(long = "crate")]
    pub as_crate: bool,
    /// A hook for a common case, with its grants added to hookrt.toml:
    /// `format-on-edit` (a formatter on each file the agent edits),
    /// `tests-at-stop` (the project's tests before a turn may end) or
    /// `notify` (a desktop notification when the agent needs you or ends a
    /// turn).
    #[arg(long, value_enum, conflicts_with = "events")]
    pub template: Option<Template>,
}

/// A common case `hookrt new --template` writes a hook for (`recipe.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Template {
    /// After the agent edits a file, run a formatter on it (the `exec` grant).
    FormatOnEdit,
    /// At `turn.stopping`, run the project's tests and keep the turn going
    /// while they fail (the `exec` grant; the loop governor caps it).
    TestsAtStop,
    /// When the agent needs you or ends a turn, a desktop notification (the
    /// `notify` grant).
    Notify,
}

/// The subscriptions `--events` names: each one a hook may subscribe to,
/// none twice, at least one.
pub(crate) fn subscriptions(args: &NewArgs) -> Result<Vec<String>> {
    let mut kinds: Vec<String> = Vec::new();
    for kind in &args.events {
        let kind = kind.trim();
        if !is_subscribable(kind) {
            bail!("--events: {}", hookrt::event::subscription_problem(kind));
        }
        if kinds.iter().any(|k| k == kind) {
            bail!("--events: `{kind}` is listed twice");
        }
        kinds.push(kind.to_owned());
    }
    if kinds.is_empty() {
        bail!("--events: name at least one event kind, e.g. --events message.completed");
    }
    Ok(kinds)
}

/// Refuses slug `slug` (file stem `name`) when a hook source of any kind
/// already holds it in `hooks_dir`: a file of each language, a component,
/// or a folder (a crate hook or a Python package).
pub(crate) fn refuse_taken(hooks_dir: &Path, name: &str, slug: &Slug) -> Result<()> {
    let taken = ["rs", "ts", "js", "py", "wasm"]
        .iter()
        .map(|ext| hooks_dir.join(format!("{name}.{ext}")))
        .chain([hooks_dir.join(name)])
        .find(|p| p.exists());
    if let Some(taken) = taken {
        bail!(
            "{} already exists: the slug `{slug}` is taken; pick another name or remove it",
            taken.display()
        );
    }
    Ok(())
}

/// What `hookrt new` asks of a one-file script hook (`lang`, written as
/// `SLUG.ext`): the agent folder, the slug, the subscriptions, the file to
/// write (its folder made); refused when the slug is taken.
pub(crate) fn script_hook(
    args: &NewArgs,
    lang: &str,
    ext: &str,
) -> Result<(PathBuf, Slug, Vec<String>, PathBuf)> {
    if args.as_crate {
        bail!("--crate: a {lang} hook is one file (SLUG.{ext}); drop --crate");
    }
    let (agent, slug) = split(&args.path)?;
    let kinds = subscriptions(args)?;
    let hooks_dir = args.path.parent().unwrap_or(Path::new("."));
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    refuse_taken(hooks_dir, name, &slug)?;
    fs::create_dir_all(hooks_dir)?;
    let target = hooks_dir.join(format!("{name}.{ext}"));
    Ok((agent, slug, kinds, target))
}

/// The kinds a hook's subscriptions vote on that fail closed by default (a
/// decision, or a gate that blocks), each once, in the order subscribed.
pub(crate) fn voting<'a>(kinds: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for k in kinds {
        if observed_kind(k).is_some() {
            continue; // it watches: its failure decides nothing
        }
        let k = handled_kind(k);
        let fails_closed =
            class_of(k) == EventClass::Decision || gate_rule(k) == Some(GateRule::Block);
        if fails_closed && !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// Says what was written and what to run next: `first`, the steps before
/// `check` (the line that installs a script language's toolchain, the lock
/// an exec table needs); `voting`, the kinds the hook votes on that fail
/// closed ([`voting`]).
pub(crate) fn next_steps(
    agent: &Path,
    slug: &Slug,
    target: &Path,
    first: &[&str],
    voting: &[&str],
) {
    println!("created {} (slug `{slug}`)", target.display());
    let agent = agent.display();
    println!("next:");
    for step in first {
        println!("  {step}");
    }
    println!("  hookrt check {agent}");
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl --update   # record what it does"
    );
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl            # check it still does"
    );
    if !voting.is_empty() {
        println!(
            "  it votes on a decision event: a failure denies by default; say so in {agent}/hookrt.toml \
             with [hooks.\"{slug}\"] on_failure = \"deny\" (or \"abstain\")"
        );
    }
    if let [first, rest @ ..] = voting
        && !rest.is_empty()
    {
        // A gate that fails closed beside a vote that fails open (issue 53).
        let per: Vec<String> = std::iter::once(format!("\"{first}\" = \"deny\""))
            .chain(rest.iter().map(|k| format!("\"{k}\" = \"abstain\"")))
            .collect();
        println!(
            "  or per subscription, e.g. on_failure = {{ {} }}",
            per.join(", ")
        );
    }
}

/// AGENT and SLUG from AGENT/hooks/SLUG (the last `hooks` component).
pub(crate) fn split(path: &Path) -> Result<(PathBuf, Slug)> {
    let parts: Vec<Component> = path.components().collect();
    let Some(at) = parts
        .iter()
        .rposition(|c| c.as_os_str() == "hooks")
        .filter(|at| at + 1 < parts.len())
    else {
        bail!(
            "{}: expected AGENT/hooks/SLUG (e.g. my-agent/hooks/tool-guard): a hook lives under an agent folder's hooks/",
            path.display()
        );
    };
    // A subagent's hooks (AGENT/subagents/ID/hooks/SLUG) belong to AGENT.
    let end = if at >= 2 && parts[at - 2].as_os_str() == "subagents" {
        at - 2
    } else {
        at
    };
    let agent: PathBuf = if end == 0 {
        PathBuf::from(".")
    } else {
        parts[..end].iter().collect()
    };
    let rest: Vec<String> = parts[at + 1..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let raw = rest.join("/");
    let raw = [".rs", ".ts", ".js"]
        .iter()
        .find_map(|ext| raw.strip_suffix(ext))
        .unwrap_or(&raw);
    let slug = Slug::parse(raw).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}; fix: use lowercase letters, digits, `_` or `-`",
            path.display()
        )
    })?;
    Ok((agent, slug))
}

/// The `Hook` method for a subscription.
pub(crate) fn method(kind: &str) -> Result<String> {
    if kind == WILDCARD {
        return Ok("any".to_owned());
    }
    if let Some(k) = kind.strip_prefix("observe:") {
        return Ok(format!("{}_observed", k.replace('.', "_")));
    }
    if let Some(k) = hookrt::event::rewritten_kind(kind) {
        return Ok(format!("{}_rewrite", k.replace('.', "_")));
    }
    if hookrt::event::KINDS.iter().any(|k| k.name == kind) {
        return Ok(kind.replace('.', "_"));
    }
    bail!(
        "--events: `{kind}` is an agent server's own kind: the SDK has no typed method for it; use `*` and match `event.kind()`"
    )
}

pub(crate) fn type_name(name: &str) -> String {
    name.split(['-', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<String>()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .to_owned()
}
