//! `hookrt new DIR/hooks/SLUG`: a working hook from a template, typed with the
//! SDK's `Hook` trait, one method per `--events` kind.

use std::fs;
use std::path::{Component, Path, PathBuf};

use anyhow::{Result, bail};
use hookrt::event::{GateRule, WILDCARD, gate_rule, handled_kind, is_subscribable};
use hookrt::hooks::Slug;
use hookrt::{EventClass, class_of};

/// Arguments of `hookrt new`.
#[derive(clap::Args)]
pub struct NewArgs {
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
}

/// Writes the hook and says what to run next.
pub fn new(args: &NewArgs) -> Result<()> {
    match args.lang.as_str() {
        "rust" | "rs" => {}
        other => bail!("--lang {other}: unknown language; use `rust`, `ts` or `py`"),
    }
    let (agent, slug) = split(&args.path)?;
    let kinds = subscriptions(args)?;
    let mut methods = Vec::new();
    for kind in kinds {
        let m = method(&kind)?;
        methods.push((kind, m));
    }
    let hooks_dir = args.path.parent().unwrap_or(Path::new("."));
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    let target = if args.as_crate {
        args.path.clone()
    } else {
        hooks_dir.join(format!("{name}.rs"))
    };
    refuse_taken(hooks_dir, name, &slug)?;
    let source = template(&slug, name, &methods);
    if args.as_crate {
        fs::create_dir_all(target.join("src"))?;
        fs::write(target.join("Cargo.toml"), manifest(name))?;
        fs::write(target.join("src").join("lib.rs"), source)?;
    } else {
        fs::create_dir_all(hooks_dir)?;
        fs::write(&target, source)?;
    }
    let votes = methods.iter().any(|(k, _)| {
        class_of(hookrt::event::rewritten_kind(k).unwrap_or(k)) == EventClass::Decision
    });
    next_steps(&agent, &slug, &target, None, votes);
    Ok(())
}

/// The subscriptions `--events` names: each one a hook may subscribe to,
/// none twice, at least one.
fn subscriptions(args: &NewArgs) -> Result<Vec<String>> {
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
fn refuse_taken(hooks_dir: &Path, name: &str, slug: &Slug) -> Result<()> {
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

/// Whether a script hook's subscriptions vote on an event that fails
/// closed: a decision, or a gate that blocks.
pub(crate) fn script_votes(kinds: &[String]) -> bool {
    kinds.iter().any(|k| {
        let k = handled_kind(k);
        class_of(k) == EventClass::Decision || gate_rule(k) == Some(GateRule::Block)
    })
}

/// Says what was written and what to run next: `toolchain`, the line that
/// installs a script language's toolchain; `votes`, whether the hook votes
/// on an event that fails closed.
pub(crate) fn next_steps(
    agent: &Path,
    slug: &Slug,
    target: &Path,
    toolchain: Option<&str>,
    votes: bool,
) {
    println!("created {} (slug `{slug}`)", target.display());
    let agent = agent.display();
    println!("next:");
    if let Some(toolchain) = toolchain {
        println!("  {toolchain}");
    }
    println!("  hookrt check {agent}");
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl --update   # record what it does"
    );
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl            # check it still does"
    );
    if votes {
        println!(
            "  it votes on a decision event: a failure denies by default; say so in {agent}/hookrt.toml \
             with [hooks.\"{slug}\"] on_failure = \"deny\" (or \"abstain\")"
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

/// The SDK type of `kind`'s data: `eve::` for the kinds only Eve's stream carries.
fn data_type(kind: &str) -> String {
    let eve = hookrt::event::KINDS
        .iter()
        .any(|k| k.name == kind && k.origin == hookrt::event::Origin::Eve);
    let name: String = kind
        .split('.')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    if eve { format!("eve::{name}") } else { name }
}

fn template(slug: &Slug, name: &str, methods: &[(String, String)]) -> String {
    let ty = match type_name(name) {
        t if t.is_empty() => "MyHook".to_owned(),
        t => t,
    };
    let mut s = format!(
        "//! Hook `{slug}`: TODO say what it does.\n//!\n\
         //! Written with the SDK's typed `Hook` trait (docs/authoring.md): each method below is\n\
         //! one subscription, and `#[hookrt_sdk::hook]` exports the ones written here.\n\n\
         use hookrt_sdk::prelude::*;\n\n\
         #[derive(Default)]\npub struct {ty};\n\n\
         #[hookrt_sdk::hook]\nimpl Hook for {ty} {{\n"
    );
    for (i, (kind, method)) in methods.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        if method == "any" {
            s.push_str(
                "    /// Every event of this hook's scope.\n    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {\n        \
                 safe_log(event, cx); // ids, kind and timing only, never event data\n        Ok(())\n    }\n",
            );
            continue;
        }
        let watched = kind.strip_prefix("observe:");
        let rewrite = hookrt::event::rewritten_kind(kind);
        let base = watched.or(rewrite).unwrap_or(kind);
        let data = data_type(base);
        let (answer, body) = match (watched, class_of(base), base) {
            (Some(_), _, _) | (None, EventClass::Observe, _) => (
                "HookResult".to_owned(),
                "safe_log(event, cx); // ids, kind and timing only, never event data\n        let _ = data;\n        Ok(())".to_owned(),
            ),
            (None, _, "actions.requested") if rewrite.is_some() => (
                "HookResult<Vec<CallAnswer>>".to_owned(),
                "safe_log(event, cx);\n        // One answer per requested call, in order: CallAnswer::keep(approval), or\n        \
                 // CallAnswer::rewrite(approval, input) with the call's whole new input (a JSON object).\n        \
                 let keep = CallAnswer::keep(Approval::Abstain);\n        Ok(vec![keep; data.actions.len()])"
                    .to_owned(),
            ),
            (None, _, "permission.requested") => (
                "HookResult<PermissionAnswer>".to_owned(),
                if rewrite.is_some() {
                    "safe_log(event, cx);\n        let _ = data;\n        // PermissionAnswer::allow_rewritten(input) allows it with its whole input rewritten.\n        \
                     Ok(PermissionAnswer::Abstain)"
                } else {
                    "safe_log(event, cx);\n        let _ = data;\n        // Allow or PermissionAnswer::deny(..) without asking; Abstain lets a human answer.\n        \
                     Ok(PermissionAnswer::Abstain)"
                }
                .to_owned(),
            ),
            (None, _, "turn.stopping") => (
                "HookResult<Continuation>".to_owned(),
                "safe_log(event, cx);\n        let _ = data;\n        // Continuation::continue_turn(..) keeps the turn going (what the model does next).\n        \
                 Ok(Continuation::Stop)"
                    .to_owned(),
            ),
            (None, EventClass::Gate, _) => (
                "HookResult<Block>".to_owned(),
                "safe_log(event, cx);\n        let _ = data;\n        // Block::block(reason) stops what the event announces; Pass lets it go on.\n        \
                 Ok(Block::Pass)"
                    .to_owned(),
            ),
            (None, _, "actions.requested") => (
                "HookResult<Vec<Approval>>".to_owned(),
                "safe_log(event, cx);\n        // One answer per requested call, in order: Allow, Approval::ask(..), Approval::deny(..).\n        \
                 Ok(vec![Approval::Abstain; data.actions.len()])"
                    .to_owned(),
            ),
            (None, _, "file.edit.requested") => (
                "HookResult<FileEditAnswer>".to_owned(),
                "safe_log(event, cx);\n        let _ = data;\n        // Own the write with Applied or FileEditAnswer::failed(..); NotHandled lets it go on.\n        \
                 Ok(FileEditAnswer::NotHandled)"
                    .to_owned(),
            ),
            (None, _, _) => (
                "HookResult<Option<AgentInput>>".to_owned(),
                "safe_log(event, cx);\n        let _ = data;\n        // Some(input) replaces the agent input state (data.state); None keeps it.\n        Ok(None)"
                    .to_owned(),
            ),
        };
        // As rustfmt lays it out: one line when it fits in 100 columns.
        let one_line = format!(
            "    fn {method}(&mut self, data: {data}, event: &Event, cx: &Context) -> {answer} {{"
        );
        let signature = if one_line.len() <= 100 {
            one_line
        } else {
            format!(
                "    fn {method}(\n        &mut self,\n        data: {data},\n        event: &Event,\n        cx: &Context,\n    ) -> {answer} {{"
            )
        };
        s.push_str(&format!(
            "    /// `{kind}`.\n{signature}\n        {body}\n    }}\n"
        ));
    }
    s.push_str("}\n");
    s
}

fn manifest(name: &str) -> String {
    format!(
        "[package]\nname = \"{}-hook\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [lib]\ncrate-type = [\"cdylib\"]\n\n\
         [dependencies]\n# hookrt supplies the SDK it was built with (a cargo patch), so no path is needed.\n\
         hookrt-sdk = \"{}\"\n\n\
         # Built on its own by hookrt, not as part of an enclosing workspace.\n[workspace]\n\n\
         [profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\n",
        name.replace('_', "-"),
        hookrt::hooks::SDK_REQ
    )
}
