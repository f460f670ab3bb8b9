//! `hookrt new DIR/hooks/SLUG --lang py`: a working Python hook from a
//! template, one `Hook` method per `--events` subscription (docs/python.md).

use std::fs;

use anyhow::Result;
use hookrt::event::{WILDCARD, rewritten_kind};
use hookrt::hooks::Slug;
use hookrt::{EventClass, class_of};

use super::entry::add_voting;
use super::scaffold::{NewArgs, method, next_steps, script_hook, type_name, voting};

/// Writes `SLUG.py` and says what to run next.
pub(super) fn new(args: &NewArgs) -> Result<()> {
    let (agent, slug, kinds, target) = script_hook(args, "Python", "py")?;
    let mut methods = Vec::new();
    for kind in &kinds {
        methods.push((kind.as_str(), method(kind)?));
    }
    fs::write(&target, template(&slug, &methods))?;
    next_steps(
        &agent,
        &slug,
        &target,
        &[
            "scripts/py-toolchain   # once per machine, from the hookrt checkout: the pinned componentize-py",
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

/// The answer names each method's body uses, in the order they are imported.
const ANSWERS: [&str; 6] = [
    "ABSTAIN",
    "CallAnswer",
    "NOT_HANDLED",
    "PASS",
    "STOP",
    "log",
];

fn template(slug: &Slug, methods: &[(&str, String)]) -> String {
    let name = slug.as_str().rsplit('/').next().unwrap_or(slug.as_str());
    let class = type_name(name);
    let mut bodies = String::new();
    for (kind, method) in methods {
        let (doc, body) = body(kind);
        let args = if *kind == WILDCARD {
            "self, event, ctx"
        } else {
            "self, data, event, ctx"
        };
        bodies.push_str(&format!(
            "\n    def {method}({args}):\n        \"\"\"`{kind}`: {doc}\"\"\"\n        \
             log.info(\"event\", id=event.id, kind=event.kind, handler=ctx.handler)\n{body}"
        ));
    }
    let used: Vec<&str> = ANSWERS
        .iter()
        .copied()
        .filter(|a| *a == "log" || bodies.contains(a))
        .collect();
    format!(
        "\"\"\"Hook `{slug}`: TODO say what it does.\n\n\
         Written with hookrt's Python SDK (docs/python.md): each method below is one\n\
         subscription. hookrt builds this file itself: it may import only `hookrt`, its\n\
         own modules and the standard library, and needs no pip install here.\n\"\"\"\n\n\
         from hookrt import Hook, {}\n\n\n\
         class {class}(Hook):{bodies}",
        used.join(", ")
    )
}

/// What a method for `kind` says and returns.
fn body(kind: &str) -> (&'static str, String) {
    let ret = |what: &str| format!("        return {what}\n");
    if kind == WILDCARD {
        return ("every event of this hook's scope.", String::new());
    }
    if kind.starts_with("observe:") {
        return (
            "watched without a vote: what it returns or raises decides nothing.",
            String::new(),
        );
    }
    match (rewritten_kind(kind), kind) {
        (Some("actions.requested"), _) => (
            "one CallAnswer(approval, rewrite=None) per requested call, in order (rewrite: the call's whole input as it should run; later hooks see it).",
            ret("[CallAnswer(ABSTAIN) for _ in data.actions]"),
        ),
        (Some(_), _) => (
            "ABSTAIN asks the human; ALLOW, AllowRewritten(input) or PermissionDeny(message) answers for them.",
            ret("ABSTAIN"),
        ),
        (None, "actions.requested") => (
            "one answer per requested call, in order: ALLOW, ABSTAIN, Ask(question) or Deny(reason).",
            ret("[ABSTAIN for _ in data.actions]"),
        ),
        (None, "permission.requested") => (
            "ABSTAIN asks the human; ALLOW or PermissionDeny(message, interrupt=False) answers for them.",
            ret("ABSTAIN"),
        ),
        (None, "turn.stopping") => (
            "STOP lets the turn end; Continue(what_next) keeps it going (at most [governor] max_continues in a row).",
            ret("STOP"),
        ),
        (None, "file.edit.requested") => (
            "APPLIED or Failed(message) owns the write; NOT_HANDLED lets it go on.",
            ret("NOT_HANDLED"),
        ),
        (None, k) if class_of(k) == EventClass::Gate => {
            ("PASS lets it happen; Block(reason) stops it.", ret("PASS"))
        }
        (None, k) if class_of(k) == EventClass::Edit => (
            "return an edited copy of event.data[\"state\"] to replace the agent input state; None keeps it.",
            ret("None"),
        ),
        _ => ("observed: what it returns is ignored.", String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_imports_what_its_methods_use() {
        let slug = Slug::parse("tool-notes").unwrap();
        let methods = [
            ("actions.requested", "actions_requested".to_owned()),
            ("observe:turn.stopping", "turn_stopping_observed".to_owned()),
            ("*", "any".to_owned()),
        ];
        let text = template(&slug, &methods);
        assert!(
            text.contains("from hookrt import Hook, ABSTAIN, log\n"),
            "{text}"
        );
        assert!(text.contains("class ToolNotes(Hook):"), "{text}");
        assert!(text.contains("    def any(self, event, ctx):"), "{text}");
        assert!(
            text.contains("return [ABSTAIN for _ in data.actions]"),
            "{text}"
        );
    }
}
