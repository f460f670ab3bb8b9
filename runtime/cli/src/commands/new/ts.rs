//! `hookrt new DIR/hooks/SLUG --lang ts`: a working TypeScript hook from a
//! template, one handler per `--events` subscription (docs/typescript.md).

use std::fs;

use anyhow::Result;
use hookrt::event::WILDCARD;
use hookrt::hooks::Slug;
use hookrt::{EventClass, class_of};

use super::entry::add_voting;
use super::scaffold::{NewArgs, next_steps, script_hook, voting};

/// Writes `SLUG.ts` and says what to run next.
pub(super) fn new(args: &NewArgs) -> Result<()> {
    let (agent, slug, kinds, target) = script_hook(args, "TypeScript", "ts")?;
    fs::write(&target, template(&slug, &kinds))?;
    next_steps(
        &agent,
        &slug,
        &target,
        &[
            "scripts/js-toolchain   # once per machine, from the hookrt checkout: the pinned componentize-js",
        ],
        &voting(kinds.iter().map(String::as_str)),
    );
    add_voting(
        &agent,
        &args.path,
        &slug,
        &voting(kinds.iter().map(String::as_str)),
    );
    Ok(())
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
