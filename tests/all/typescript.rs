//! TypeScript hooks: `hooks/NAME.ts` built by componentize-js, held to the
//! same grants, limits and outcomes as a Rust hook, and built without running
//! anything the agent folder holds on the host.

use std::fs;

use hookrt::hooks::SourceKind;
use hookrt::{Approval, Delivery, EditStatus, Envelope, FileEdit, Outcome, Resolution, Runtime};

use crate::common::{TempAgent, example, last_field, load, opts, run_transcript, transcript};

/// `testing/hooks/ts_probe.ts` with the grants it needs and `extra` config.
fn probe(extra: &str) -> TempAgent {
    TempAgent::new()
        .hook("testing/hooks/ts_probe.ts", "ts_probe.ts")
        .config(&format!(
            "[hooks.ts_probe]\ngrants = [\"log\", \"metrics\", \"state\"]\non_failure = \"deny\"\n{extra}"
        ))
}

fn event(kind: &str) -> Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == kind)
        .expect("kind in transcript")
}

fn deliver(rt: &Runtime, kind: &str) -> Delivery {
    let mut ds = rt.dispatch(&event(kind)).unwrap().deliveries;
    assert_eq!(ds.len(), 1);
    ds.remove(0)
}

/// The problems of loading `agent`, as one text.
fn load_problems(agent: &TempAgent) -> String {
    match Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("{} loaded", agent.path().display()),
        Err(p) => p.to_string(),
    }
}

#[test]
fn a_ts_hook_imports_only_the_host_interfaces_it_uses() {
    let rt = load(probe("").path());
    let hook = &rt.hooks()[0];
    assert_eq!(hook.kind, SourceKind::TypeScript);
    let mut imports = hook.imports.clone();
    imports.sort();
    // No wasi:* at all: componentize-js ran with every WASI feature off.
    assert_eq!(
        imports,
        [
            "hookrt:hook/log@0.4.0",
            "hookrt:hook/metrics@0.4.0",
            "hookrt:hook/state@0.4.0",
            "hookrt:hook/types@0.4.0"
        ]
    );
    let rt = load(&example("agent"));
    let timer = rt.hooks().iter().find(|h| h.id() == "tool_timer").unwrap();
    let mut imports = timer.imports.clone();
    imports.sort();
    assert_eq!(
        imports,
        ["hookrt:hook/log@0.4.0", "hookrt:hook/types@0.4.0"]
    );
}

#[test]
fn a_ts_hook_using_state_without_the_grant_is_refused_at_load() {
    let agent = TempAgent::new().hook("testing/hooks/ts_probe.ts", "ts_probe.ts");
    let text = load_problems(&agent);
    assert!(
        text.contains("imports `hookrt:hook/state@0.4.0`, which is not granted")
            && text.contains("imports `hookrt:hook/metrics@0.4.0`, which is not granted"),
        "{text}"
    );
}

#[test]
fn ts_answers_of_each_class_reach_the_merge() {
    let rt = load(probe("").path());
    let Some(Resolution::ToolApproval(t)) =
        rt.dispatch(&event("actions.requested")).unwrap().resolution
    else {
        panic!("no tool approval");
    };
    let verdicts: Vec<(&str, &Approval)> = t
        .calls
        .iter()
        .map(|c| (c.call_id.as_str(), &c.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("call_01", &Approval::Allow),
            ("call_02", &Approval::Deny("no shell: call_02".into()))
        ]
    );
    let Some(Resolution::FileEdit(f)) = rt
        .dispatch(&event("file.edit.requested"))
        .unwrap()
        .resolution
    else {
        panic!("no file-edit decision");
    };
    assert_eq!(
        f.result,
        FileEdit::Failed("probe owns src/config.rs".into())
    );
    let step = event("step.completed");
    let Some(Resolution::Edit(r)) = rt.dispatch(&step).unwrap().resolution else {
        panic!("no edit result");
    };
    assert!(r.changed && r.rolled_back.is_none());
    assert_eq!(
        r.state["extras"]["ts_probe"],
        serde_json::json!({"step": step.data["index"]})
    );
    assert_eq!(r.accounts[0].status, EditStatus::Applied);
}

#[test]
fn state_and_metrics_work_from_a_ts_hook_with_their_grants() {
    let rt = load(probe("").path());
    let d = deliver(&rt, "message.received");
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(
        last_field(&d, "last").as_deref(),
        Some(event("message.received").id.as_str())
    );
}

#[test]
fn a_ts_hook_top_level_ran_inside_webassembly_not_node() {
    let rt = load(probe("").path());
    let d = deliver(&rt, "session.started");
    assert_eq!(
        last_field(&d, "host").as_deref(),
        Some("process=undefined require=undefined")
    );
}

#[test]
fn a_ts_hook_in_an_endless_loop_ends_out_of_fuel_or_at_its_deadline() {
    let rt = load(
        probe("config = { mode = \"spin\" }\nfuel = 20_000_000\ndeadline_ms = 60000\n").path(),
    );
    let d = deliver(&rt, "session.started");
    assert_eq!(d.outcome, Outcome::OutOfFuel, "{:?}", d.error);
    assert_eq!(d.fuel_used, 20_000_000);
    let rt = load(
        probe("config = { mode = \"spin\" }\nfuel = 10_000_000_000\ndeadline_ms = 50\n").path(),
    );
    let d = deliver(&rt, "session.started");
    assert_eq!(d.outcome, Outcome::Timeout, "{:?}", d.error);
}

#[test]
fn a_ts_hook_that_allocates_without_end_is_stopped_by_its_memory_limit() {
    let rt = load(
        probe("config = { mode = \"alloc\" }\nfuel = 10_000_000_000\ndeadline_ms = 60000\n").path(),
    );
    let d = deliver(&rt, "session.started");
    // SpiderMonkey turns the refused allocation into an exception; the SDK
    // traps on it, so the outcome names the limit as for a Rust hook.
    assert_eq!(d.outcome, Outcome::OutOfMemory, "{:?}", d.error);
}

#[test]
fn a_thrown_error_fails_the_delivery_with_its_message() {
    let rt = load(probe("config = { mode = \"throw\" }\n").path());
    let d = deliver(&rt, "session.started");
    assert_eq!(d.outcome, Outcome::Error);
    assert_eq!(
        d.error.as_deref(),
        Some("session.started: probe failed on purpose")
    );
}

#[test]
fn tool_timer_times_each_call_and_sums_them_per_tool() {
    let ds = run_transcript(&load(&example("agent")));
    let timer: Vec<&Delivery> = ds.iter().filter(|d| d.hook == "tool_timer").collect();
    assert_eq!(timer.len(), 12, "5 requests, 6 results, 1 session end");
    assert!(timer.iter().all(|d| d.outcome == Outcome::Ok));
    let lines: Vec<String> = timer
        .iter()
        .flat_map(|d| &d.logs)
        .map(|l| {
            let f: Vec<String> = l.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{} {}", l.message, f.join(" "))
        })
        .collect();
    assert_eq!(
        lines,
        [
            "tool call tool=read_file call_id=call_01 ms=4 waited_ms=30 status=ok",
            "slow tool call tool=run_shell call_id=call_02 ms=8421 waited_ms=8480 status=ok slow_ms=5000",
            "tool call tool=run_shell call_id=call_03 ms=11 waited_ms=40 status=ok",
            "tool call tool=http_fetch call_id=call_04 ms=2 waited_ms=10 status=error",
            "slow tool call tool=run_shell call_id=call_05 ms=6120 waited_ms=6150 status=ok slow_ms=5000",
            "tool call tool=run_shell call_id=call_06 ms=930 waited_ms=950 status=ok",
            "tool time tool=http_fetch calls=1 total_ms=2 max_ms=2 errors=1 mean_ms=2",
            "tool time tool=read_file calls=1 total_ms=4 max_ms=4 errors=0 mean_ms=4",
            "tool time tool=run_shell calls=4 total_ms=15482 max_ms=8421 errors=0 mean_ms=3871",
        ]
    );
}

#[test]
fn a_ts_import_other_than_the_sdk_is_refused_with_file_line_and_fix() {
    let agent = TempAgent::new().file(
        "hooks/fetcher.ts",
        "import { defineHook } from \"hookrt\";\nimport { readFileSync } from \"node:fs\";\n\
         export default defineHook({ \"*\"() { readFileSync(\"/etc/passwd\"); } });\n",
    );
    let text = load_problems(&agent);
    assert!(
        text.contains("hooks/fetcher.ts:2:30: import \"node:fs\" is not allowed")
            && text.contains("fix: a hook may import only \"hookrt\""),
        "{text}"
    );
}

#[test]
fn a_misspelled_kind_in_a_ts_hook_is_a_type_error_at_its_line() {
    let agent = TempAgent::new().file(
        "hooks/typo.ts",
        "import { defineHook } from \"hookrt\";\nexport default defineHook({\n  \"mesage.completed\"(event) {},\n});\n",
    );
    let text = load_problems(&agent);
    assert!(
        text.contains("hooks/typo.ts:3:3: Object literal may only specify known properties, and '\"mesage.completed\"' does not exist"),
        "{text}"
    );
}

/// An agent folder that plants what a Node.js build would run or bundle: an
/// npm `postinstall`/`install`/`prepare` script, a `node_modules` package whose
/// code writes a marker when loaded, a `tsconfig.json` with a plugin, and an
/// `.npmrc`. The build reads the hook's text and nothing else.
#[test]
fn a_ts_build_runs_and_bundles_nothing_the_agent_folder_holds() {
    let marker = tempfile::tempdir().unwrap();
    let m = |name: &str| marker.path().join(name);
    let touch = |name: &str| {
        format!(
            "require('fs').writeFileSync({:?}, 'ran')",
            m(name).display().to_string()
        )
    };
    let package = serde_json::json!({
        "name": "planted", "version": "1.0.0", "type": "module",
        "scripts": {"preinstall": touch("preinstall"), "install": touch("install"),
                    "postinstall": touch("postinstall"), "prepare": touch("prepare")},
        "dependencies": {"left-pad": "1.3.0"}
    });
    let timer = fs::read_to_string(example("agent/hooks/tool_timer.ts")).unwrap();
    let agent = TempAgent::new()
        .file("package.json", &package.to_string())
        .file("hooks/package.json", &package.to_string())
        .file(".npmrc", &format!("onload-script={}\n", m("npmrc").display()))
        .file(
            "tsconfig.json",
            "{\"compilerOptions\": {\"plugins\": [{\"name\": \"planted-plugin\"}], \"paths\": {\"hookrt\": [\"./node_modules/left-pad\"]}}}",
        )
        .file(
            "node_modules/left-pad/package.json",
            "{\"name\":\"left-pad\",\"version\":\"1.3.0\",\"main\":\"index.js\"}",
        )
        .file(
            "node_modules/left-pad/index.js",
            &format!("{};\nmodule.exports = 'PLANTED-LEFT-PAD';\n", touch("module")),
        )
        .file(
            "node_modules/hookrt/index.js",
            &format!("{};\nexport const defineHook = () => 'PLANTED-HOOKRT';\n", touch("sdk")),
        )
        // Its own text (not the example's), so a cold cache builds it here
        // (scripts/test builds the same text beforehand, off the clock).
        .file("hooks/tool_timer.ts", &format!("{timer}\n// built in a planted agent folder\n"))
        .file(
            "hooks/padder.ts",
            "import { defineHook } from \"hookrt\";\nimport pad from \"left-pad\";\n\
             export default defineHook({ \"*\"() { pad; } });\n",
        );
    // The hook that imports the planted package is refused by the import
    // check before anything is componentized.
    let text = load_problems(&agent);
    assert!(
        text.contains("hooks/padder.ts:2:17: import \"left-pad\" is not allowed"),
        "{text}"
    );
    fs::remove_file(agent.path().join("hooks/padder.ts")).unwrap();
    // The other hook builds from the SDK, not the planted `hookrt`, and its
    // component holds none of the planted code.
    let rt = load(agent.path());
    let hook = &rt.hooks()[0];
    let bytes = fs::read(&hook.component).unwrap();
    for planted in [&b"PLANTED-LEFT-PAD"[..], b"PLANTED-HOOKRT"] {
        assert!(!bytes.windows(planted.len()).any(|w| w == planted));
    }
    let names: Vec<String> = fs::read_dir(marker.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.is_empty(), "planted code ran: {names:?}");
}
