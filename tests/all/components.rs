//! Loading: prebuilt components, and every way a hook can fail to load, each
//! named with its path.

use std::fs;

use hookrt::Outcome;
use hookrt::hooks::build;
use hookrt::hooks::{SourceKind, discover};

use crate::common::{TempAgent, opts, transcript};

fn load_problems(agent: &TempAgent) -> Vec<String> {
    match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("load should fail"),
        Err(p) => {
            p.0.into_iter()
                .map(|p| {
                    format!(
                        "{}: {}",
                        p.path.strip_prefix(agent.path()).unwrap().display(),
                        p.message
                    )
                })
                .collect()
        }
    }
}

#[test]
fn a_prebuilt_component_runs_like_a_source_hook() {
    // Build the witness from source, then ship its component as `.wasm`.
    let source = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let (built, problems) = build(
        &discover(source.path()).unwrap().hooks,
        &opts(),
        &mut |_| {},
    );
    assert!(problems.is_empty(), "{problems:?}");
    let agent = TempAgent::new();
    fs::copy(
        &built[0].component,
        agent.path().join("hooks/prebuilt.wasm"),
    )
    .unwrap();

    let rt = crate::common::load(agent.path());
    assert_eq!(rt.hooks()[0].kind, SourceKind::Component);
    assert!(!rt.hooks()[0].cargo_built, "a .wasm is never built");
    let report = rt.dispatch(&transcript()[0]).unwrap();
    assert_eq!(report.deliveries.len(), 1);
    assert_eq!(
        (
            report.deliveries[0].hook.as_str(),
            report.deliveries[0].outcome
        ),
        ("prebuilt", Outcome::Ok)
    );
}

#[test]
fn broken_wasm_files_are_refused_with_their_paths() {
    let agent = TempAgent::new()
        // Not WebAssembly at all.
        .file("hooks/garbage.wasm", "this is not wasm")
        // A core module, not a component.
        .file("hooks/core.wasm", "\0asm\x01\0\0\0")
        // A valid, empty component: it does not implement the world.
        .file("hooks/empty.wasm", "\0asm\x0d\0\x01\0");
    let problems = load_problems(&agent);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems[0].starts_with("hooks/core.wasm: is not a valid WebAssembly component"),
        "{problems:#?}"
    );
    assert!(
        problems[1].starts_with("hooks/empty.wasm: does not implement the `hookrt:hook/define-hook` world (any of versions 0.4.0, 0.3.0, 0.2.0, 0.1.0)"),
        "{problems:#?}"
    );
    assert!(
        problems[2].starts_with("hooks/garbage.wasm: is not a valid WebAssembly component"),
        "{problems:#?}"
    );
}

const TYPO_HOOK: &str = r#"
use hookrt_sdk::prelude::*;
#[derive(Default)]
pub struct Typo;
impl Typo {
    fn done(&mut self, _e: &Event, _c: &Context) -> HookResult { Ok(()) }
}
hookrt_sdk::define_hook!(Typo { "mesage.completed" => done });
"#;

#[test]
fn a_subscription_typo_fails_the_load_with_a_suggestion() {
    let agent = TempAgent::new().file("hooks/typo.rs", TYPO_HOOK);
    assert_eq!(
        load_problems(&agent),
        [
            "hooks/typo.rs: subscribes to an unknown event kind `mesage.completed` (did you mean `message.completed`?)"
        ]
    );
}

#[test]
fn a_subscription_typo_is_pointed_at_the_handler_line_the_author_wrote() {
    let agent = TempAgent::new().file("hooks/typo.rs", TYPO_HOOK);
    let fix = match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("load should fail"),
        Err(p) => p.0[0].fix.clone(),
    };
    assert_eq!(
        fix,
        format!(
            "fix the handler's kind: `\"mesage.completed\"` at {}:8 (or write the hook with the SDK's typed `Hook` trait, whose method names are checked when it compiles)",
            agent.path().join("hooks/typo.rs").display()
        )
    );
}

#[test]
fn a_hook_that_does_not_compile_is_reported_at_its_own_path() {
    let agent = TempAgent::new()
        .file(
            "hooks/broken.rs",
            &TYPO_HOOK.replace("Ok(())", "Ok(undefined_thing)"),
        )
        .hook("hostile/hooks/witness.rs", "fine.rs");
    let problems = load_problems(&agent);
    assert_eq!(
        problems.len(),
        1,
        "only the broken hook fails: {problems:#?}"
    );
    assert!(
        problems[0].starts_with("hooks/broken.rs: does not build into a component:"),
        "{}",
        problems[0]
    );
    assert!(
        problems[0].contains("cannot find value `undefined_thing`"),
        "{}",
        problems[0]
    );
    let original = agent.path().join("hooks/broken.rs").display().to_string();
    assert!(
        problems[0].contains(&format!("{original}:")),
        "the compiler error points at the hook's own file: {}",
        problems[0]
    );
}
