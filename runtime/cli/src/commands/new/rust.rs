//! `hookrt new DIR/hooks/SLUG` in Rust: a working hook typed with the SDK's
//! `Hook` trait, one method per `--events` kind, as one file or a crate (with
//! its `Cargo.lock`, which its build needs).

use std::fs;
use std::path::Path;

use anyhow::Result;
use hookrt::hooks::{DiscoveredHook, Slug, SourceKind, write_cargo_lock};
use hookrt::{EventClass, class_of};

use crate::loading::Loading;

use super::entry::add_voting;
use super::scaffold::{
    NewArgs, method, next_steps, refuse_taken, split, subscriptions, type_name, voting,
};

/// Writes the hook and says what to run next.
pub(super) fn new(args: &NewArgs, loading: Loading) -> Result<()> {
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
    let mut first = None;
    if args.as_crate {
        fs::create_dir_all(target.join("src"))?;
        fs::write(target.join("Cargo.toml"), manifest(name))?;
        fs::write(target.join("src").join("lib.rs"), source)?;
        first = cargo_lock(&agent, &slug, &target, loading);
    } else {
        fs::create_dir_all(hooks_dir)?;
        fs::write(&target, source)?;
    }
    let voting = voting(methods.iter().map(|(k, _)| k.as_str()));
    next_steps(&agent, &slug, &target, first.as_deref().as_slice(), &voting);
    add_voting(&agent, &args.path, &slug, &voting);
    Ok(())
}

/// Writes the new crate's `Cargo.lock` (crate hooks build `--locked`); when
/// it cannot, says why and returns the step that writes it later.
fn cargo_lock(agent: &Path, slug: &Slug, krate: &Path, loading: Loading) -> Option<String> {
    let later = format!(
        "hookrt lock {}   # writes the crate's Cargo.lock (crate hooks build --locked)",
        agent.display()
    );
    if loading.prebuilt {
        return Some(later);
    }
    let hook = DiscoveredHook {
        slug: slug.clone(),
        kind: SourceKind::Crate,
        path: krate.to_path_buf(),
        scope: hookrt::Scope::Primary,
    };
    match write_cargo_lock(&hook, &loading.options(agent)) {
        Ok(w) => {
            println!("wrote {}", w.path.display());
            None
        }
        Err(p) => {
            eprintln!("warning: {p}");
            Some(later)
        }
    }
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
        s.push_str(&method_source(kind, method));
    }
    s.push_str("}\n");
    s
}

/// One method of the template: its doc, signature and a body that answers
/// nothing yet.
fn method_source(kind: &str, method: &str) -> String {
    if method == "any" {
        return "    /// Every event of this hook's scope.\n    fn any(&mut self, event: &Event, cx: &Context) -> HookResult {\n        \
                 safe_log(event, cx); // ids, kind and timing only, never event data\n        Ok(())\n    }\n"
            .to_owned();
    }
    let watched = kind.strip_prefix("observe:");
    let rewrite = hookrt::event::rewritten_kind(kind);
    let base = watched.or(rewrite).unwrap_or(kind);
    let data = data_type(base);
    let (answer, body) = answer_and_body(watched.is_some(), rewrite.is_some(), base);
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
    format!("    /// `{kind}`.\n{signature}\n        {body}\n    }}\n")
}

/// The answer type and the body of the method for `base` (`watched`: an
/// `observe:` subscription; `rewrite`: a `rewrite:` one).
fn answer_and_body(watched: bool, rewrite: bool, base: &str) -> (String, String) {
    match (watched, class_of(base), base) {
        (true, _, _) | (false, EventClass::Observe, _) => (
            "HookResult".to_owned(),
            "safe_log(event, cx); // ids, kind and timing only, never event data\n        let _ = data;\n        Ok(())".to_owned(),
        ),
        (false, _, "actions.requested") if rewrite => (
            "HookResult<Vec<CallAnswer>>".to_owned(),
            "safe_log(event, cx);\n        // One answer per requested call, in order: CallAnswer::keep(approval), or\n        \
             // CallAnswer::rewrite(approval, input) with the call's whole new input (a JSON object).\n        \
             let keep = CallAnswer::keep(Approval::Abstain);\n        Ok(vec![keep; data.actions.len()])"
                .to_owned(),
        ),
        (false, _, "permission.requested") => (
            "HookResult<PermissionAnswer>".to_owned(),
            if rewrite {
                "safe_log(event, cx);\n        let _ = data;\n        // PermissionAnswer::allow_rewritten(input) allows it with its whole input rewritten.\n        \
                 Ok(PermissionAnswer::Abstain)"
            } else {
                "safe_log(event, cx);\n        let _ = data;\n        // Allow or PermissionAnswer::deny(..) without asking; Abstain lets a human answer.\n        \
                 Ok(PermissionAnswer::Abstain)"
            }
            .to_owned(),
        ),
        (false, _, "turn.stopping") => (
            "HookResult<Continuation>".to_owned(),
            "safe_log(event, cx);\n        let _ = data;\n        // Continuation::continue_turn(..) keeps the turn going (what the model does next).\n        \
             Ok(Continuation::Stop)"
                .to_owned(),
        ),
        (false, EventClass::Gate, _) => (
            "HookResult<Block>".to_owned(),
            "safe_log(event, cx);\n        let _ = data;\n        // Block::block(reason) stops what the event announces; Pass lets it go on.\n        \
             Ok(Block::Pass)"
                .to_owned(),
        ),
        (false, _, "actions.requested") => (
            "HookResult<Vec<Approval>>".to_owned(),
            "safe_log(event, cx);\n        // One answer per requested call, in order: Allow, Approval::ask(..), Approval::deny(..).\n        \
             Ok(vec![Approval::Abstain; data.actions.len()])"
                .to_owned(),
        ),
        (false, _, "file.edit.requested") => (
            "HookResult<FileEditAnswer>".to_owned(),
            "safe_log(event, cx);\n        let _ = data;\n        // Own the write with Applied or FileEditAnswer::failed(..); NotHandled lets it go on.\n        \
             Ok(FileEditAnswer::NotHandled)"
                .to_owned(),
        ),
        (false, _, _) => (
            "HookResult<Option<AgentInput>>".to_owned(),
            "safe_log(event, cx);\n        let _ = data;\n        // Some(input) replaces the agent input state (data.state); None keeps it.\n        Ok(None)"
                .to_owned(),
        ),
}
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
