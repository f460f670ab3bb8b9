//! `hookrt new DIR/hooks/SLUG --lang ts`: a working TypeScript hook from a
//! template, one handler per `--events` subscription (docs/typescript.md).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use hookrt::event::{GateRule, WILDCARD, gate_rule, handled_kind, is_subscribable};
use hookrt::hooks::Slug;
use hookrt::{EventClass, class_of};

use crate::new::{NewArgs, split};

/// Whether `--lang` asks for TypeScript (or JavaScript, written as TypeScript).
pub fn wants(args: &NewArgs) -> bool {
    matches!(
        args.lang.as_str(),
        "ts" | "typescript" | "js" | "javascript"
    )
}

/// Writes `SLUG.ts` and says what to run next.
pub fn new(args: &NewArgs) -> Result<()> {
    let (agent, slug, kinds, target) = script_hook(args, "TypeScript", "ts")?;
    fs::write(&target, template(&slug, &kinds))?;
    next_steps(
        &agent,
        &slug,
        &kinds,
        &target,
        "scripts/js-toolchain   # once per machine, from the hookrt checkout: the pinned componentize-js",
    );
    Ok(())
}

/// What `hookrt new` asks of a one-file script hook (`lang`, written as
/// `SLUG.ext`): the agent folder, the slug, the subscriptions, the file to
/// write (its folder made); refused when the slug is taken.
pub fn script_hook(
    args: &NewArgs,
    lang: &str,
    ext: &str,
) -> Result<(PathBuf, Slug, Vec<String>, PathBuf)> {
    if args.as_crate {
        bail!("--crate: a {lang} hook is one file (SLUG.{ext}); drop --crate");
    }
    let (agent, slug) = split(&args.path)?;
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
    let hooks_dir = args.path.parent().unwrap_or(Path::new("."));
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    let target = hooks_dir.join(format!("{name}.{ext}"));
    let taken = ["rs", "ts", "js", "py", "wasm"]
        .iter()
        .map(|ext| hooks_dir.join(format!("{name}.{ext}")))
        .chain([hooks_dir.join(name)]) // a crate hook's or a Python package's folder
        .find(|p| p.exists());
    if let Some(taken) = taken {
        bail!(
            "{} already exists: the slug `{slug}` is taken; pick another name or remove it",
            taken.display()
        );
    }
    fs::create_dir_all(hooks_dir)?;
    Ok((agent, slug, kinds, target))
}

/// Says what was written and what to run next (`toolchain`: the line that
/// installs the language's toolchain).
pub fn next_steps(agent: &Path, slug: &Slug, kinds: &[String], target: &Path, toolchain: &str) {
    println!("created {} (slug `{slug}`)", target.display());
    let agent = agent.display();
    println!("next:");
    println!("  {toolchain}");
    println!("  hookrt check {agent}");
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl --update   # record what it does"
    );
    println!(
        "  hookrt test {agent} --events EVENTS.jsonl --expect EXPECTED.jsonl            # check it still does"
    );
    if kinds.iter().any(|k| {
        let k = handled_kind(k);
        class_of(k) == EventClass::Decision || gate_rule(k) == Some(GateRule::Block)
    }) {
        println!(
            "  it votes on a decision event: a failure denies by default; say so in {agent}/hookrt.toml \
             with [hooks.\"{slug}\"] on_failure = \"deny\" (or \"abstain\")"
        );
    }
}

fn template(slug: &Slug, kinds: &[String]) -> String {
    let decides = kinds.iter().any(|k| k == "actions.requested");
    let import = if decides {
        "import { defineHook, log, type Approval } from \"hookrt\";"
    } else {
        "import { defineHook, log } from \"hookrt\";"
    };
    let mut s = format!(
        "// Hook `{slug}`: TODO say what it does.\n//\n\
         // Written with hookrt's TypeScript SDK (docs/typescript.md): each handler below is one\n\
         // subscription. hookrt type-checks and builds this file itself: it may import only\n\
         // \"hookrt\", and needs no package.json or npm install here.\n\n\
         {import}\n\nexport default defineHook({{\n"
    );
    // ids, kind and timing only: event data can hold secrets.
    let trace = "log.info(\"event\", { id: event.id, kind: event.kind, handler: ctx.handler });";
    for (i, kind) in kinds.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let (doc, body) = match (kind.as_str(), class_of(kind)) {
            (WILDCARD, _) => ("Every event of this hook's scope.", String::new()),
            (k, _) if k.starts_with("observe:") => (
                "Watched without a vote: what it returns or throws decides nothing.",
                String::new(),
            ),
            ("actions.requested", _) => (
                "One answer per requested call, in order: \"allow\", \"abstain\", { ask: \"question\" } or { deny: \"reason\" }.",
                "\n    return event.data.actions.map((): Approval => \"abstain\");".to_owned(),
            ),
            ("rewrite:actions.requested", _) => (
                "One answer per requested call, in order: { approval, rewrite? } (rewrite: the call's whole input as it should run; later hooks see it).",
                "\n    return event.data.actions.map(() => ({ approval: \"abstain\" as const }));"
                    .to_owned(),
            ),
            ("permission.requested" | "rewrite:permission.requested", _) => (
                "\"abstain\" asks the human; \"allow\" or { deny: { message, interrupt? } } answers for them (under rewrite:, { allow: { input } } too).",
                "\n    return \"abstain\";".to_owned(),
            ),
            ("turn.stopping", _) => (
                "\"stop\" lets the turn end; { continue: \"what to do next\" } keeps it going (at most [governor] max_continues in a row).",
                "\n    return \"stop\";".to_owned(),
            ),
            (_, EventClass::Gate) => (
                "\"pass\" lets it happen; { block: \"reason\" } stops it.",
                "\n    return \"pass\";".to_owned(),
            ),
            ("file.edit.requested", _) => (
                "\"applied\" or { failed: \"message\" } owns the write; \"not-handled\" lets it go on.",
                "\n    return \"not-handled\";".to_owned(),
            ),
            (_, EventClass::Edit) => (
                "Return an edited copy of event.data.state to replace the agent input state; nothing keeps it.",
                String::new(),
            ),
            _ => ("Observed: what it returns is ignored.", String::new()),
        };
        s.push_str(&format!(
            "  /** `{kind}`: {doc} */\n  \"{kind}\"(event, ctx) {{\n    {trace}{body}\n  }},\n"
        ));
    }
    s.push_str("});\n");
    s
}
