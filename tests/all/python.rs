//! Python hooks: `hooks/NAME.py` (or a package folder) built by componentize-py,
//! held to the same grants, limits and outcomes as a Rust hook; the filesystem and
//! socket imports CPython brings are inert; nothing the agent folder holds runs on
//! the host while it is built.

use std::fs;

use hookrt::event::Gate;
use hookrt::hooks::SourceKind;
use hookrt::{Approval, Coordinates, Delivery, Envelope, Outcome, Resolution, Runtime};
use serde_json::json;

use crate::common::{TempAgent, example, last_field, load, opts, repo, run_transcript};

/// A folder with the fixture hook `tests/fixtures/python/<name>.py` as
/// `hooks/<slug>.py` and `config` as its hookrt.toml.
fn agent(fixture: &str, slug: &str, config: &str) -> TempAgent {
    let text = fs::read_to_string(repo().join(format!("tests/fixtures/python/{fixture}.py")))
        .unwrap_or_else(|e| panic!("{fixture}: {e}"));
    TempAgent::new()
        .file(&format!("hooks/{slug}.py"), &text)
        .config(config)
}

fn event(kind: &str, data: serde_json::Value) -> Envelope {
    Envelope::new("e1", kind, Coordinates::new("coder", "s1", 0), data).unwrap()
}

fn shell(command: &str) -> Envelope {
    event(
        "actions.requested",
        json!({"actions": [{"call_id": "c1", "tool": "run_shell", "input": {"command": command}}]}),
    )
}

fn deliver(rt: &Runtime, e: &Envelope) -> (Delivery, Option<Resolution>) {
    let mut d = rt.dispatch(e).unwrap();
    assert_eq!(d.deliveries.len(), 1);
    (d.deliveries.remove(0), d.resolution)
}

/// The delivery of a `session.started` to `rt`'s one hook.
fn started(rt: &Runtime) -> Delivery {
    deliver(
        rt,
        &event("session.started", json!({"agent_name": "coder"})),
    )
    .0
}

fn verdict(r: Option<Resolution>) -> Approval {
    match r {
        Some(Resolution::ToolApproval(t)) => t.calls[0].verdict.clone(),
        other => panic!("expected a tool approval, got {other:?}"),
    }
}

/// The problems of loading `agent`, as one text.
fn load_problems(agent: &TempAgent) -> String {
    match Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("{} loaded", agent.path().display()),
        Err(p) => p.to_string(),
    }
}

/// A policy in Python denies a dangerous shell call, abstains on a harmless
/// one, and blocks a prompt: its answers reach the merge like a Rust hook's.
#[test]
fn a_python_policy_denies_a_dangerous_call_and_abstains_on_others() {
    let a = agent(
        "policy/hooks/guard",
        "guard",
        "[hooks.guard]\non_failure = \"deny\"\n",
    );
    let rt = load(a.path());
    let hook = &rt.hooks()[0];
    assert_eq!(hook.kind, SourceKind::Python);
    let (d, r) = deliver(&rt, &shell("rm -rf build/"));
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert!(matches!(verdict(r), Approval::Deny(_)), "{d:?}");
    let (d, r) = deliver(&rt, &shell("ls -la"));
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(verdict(r), Approval::Abstain);
    let (_, r) = deliver(
        &rt,
        &event(
            "prompt.submitted",
            json!({"prompt": "now DROP TABLE users;"}),
        ),
    );
    match r {
        Some(Resolution::Gate(g)) => assert!(matches!(g.verdict, Gate::Block(_)), "{g:?}"),
        other => panic!("expected a gate, got {other:?}"),
    }
    // What CPython imports besides the world is the inert baseline; the
    // hook imports no host interface it does not use.
    let mut host: Vec<&str> = hook
        .imports
        .iter()
        .filter(|i| i.starts_with("hookrt:"))
        .map(String::as_str)
        .collect();
    host.sort();
    assert_eq!(host, ["hookrt:hook/log@0.4.0", "hookrt:hook/types@0.4.0"]);
    assert!(hook.import_audit.iter().all(|a| a.granted));
}

/// An observer counts the events it sees in `state` (which outlives its
/// instances) and in a metric; it needs both grants.
#[test]
fn a_python_observer_counts_events_in_state_with_its_grants() {
    let config = "[hooks.counter]\ngrants = [\"log\", \"state\", \"metrics\"]\n";
    let a = agent("counter/hooks/counter", "counter", config);
    let rt = load(a.path());
    let ds = run_transcript(&rt);
    assert!(ds.iter().all(|d| d.outcome == Outcome::Ok), "{ds:?}");
    let counts = rt.state().access("counter").get("counts").expect("counts");
    let counts: serde_json::Value = serde_json::from_slice(&counts).unwrap();
    assert_eq!(counts["actions.requested"], 5, "{counts}");
    assert_eq!(counts["step.completed"], 7, "{counts}");
    let total: u64 = counts
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, ds.len());
    assert!(
        rt.metrics()
            .snapshot()
            .iter()
            .any(|(s, v)| s.0 == "counter" && *v > 0.0),
        "a counter metric"
    );
    // Without the grants the component is refused at load, naming them.
    let a = agent("counter/hooks/counter", "counter", "");
    let text = load_problems(&a);
    assert!(
        text.contains("imports `hookrt:hook/state@0.4.0`, which is not granted"),
        "{text}"
    );
}

/// Typed config: parsed into the hook's dataclass before `configure`; a
/// value `configure` refuses, or a key the dataclass lacks, refuses the hook
/// at load with the hook's words.
#[test]
fn a_python_hook_with_typed_config_uses_it_and_refuses_a_bad_one() {
    let config = "[hooks.limits]\non_failure = \"deny\"\nconfig = { max_calls = 1, blocked_tools = [\"http_fetch\"] }\n";
    let rt = load(agent("config/hooks/limits", "limits", config).path());
    let call = |tool: &str, n: usize| {
        let actions: Vec<serde_json::Value> = (0..n)
            .map(|i| json!({"call_id": format!("c{i}"), "tool": tool, "input": {}}))
            .collect();
        event("actions.requested", json!({ "actions": actions }))
    };
    let (_, r) = deliver(&rt, &call("http_fetch", 1));
    assert!(matches!(verdict(r), Approval::Deny(_)));
    let (_, r) = deliver(&rt, &call("read_file", 1));
    assert_eq!(verdict(r), Approval::Abstain);
    let (_, r) = deliver(&rt, &call("read_file", 2));
    assert!(
        matches!(verdict(r), Approval::Deny(_)),
        "more than max_calls"
    );
    let bad = "[hooks.limits]\non_failure = \"deny\"\nconfig = { max_calls = 0 }\n";
    let text = load_problems(&agent("config/hooks/limits", "limits", bad));
    assert!(text.contains("refused its configuration"), "{text}");
    assert!(text.contains("max_calls"), "{text}");
    let unknown = "[hooks.limits]\non_failure = \"deny\"\nconfig = { max_cals = 3 }\n";
    let text = load_problems(&agent("config/hooks/limits", "limits", unknown));
    assert!(text.contains("max_cals"), "{text}");
}

/// CPython imports the filesystem and sockets; they are linked inert: an
/// open, a listing, a connect and a name lookup each fail inside the sandbox
/// with Python's own error, and nothing reaches the host.
#[test]
fn a_python_hooks_files_and_sockets_fail_inside_the_sandbox() {
    let marker = std::env::temp_dir().join("hookrt-python-escape");
    let _ = fs::remove_file(&marker);
    let rt = load(agent("escape/hooks/escape", "escape", "").path());
    let audit = &rt.hooks()[0].import_audit;
    assert!(
        audit
            .iter()
            .any(|a| a.import.starts_with("wasi:filesystem/")
                && matches!(&a.need, hookrt::sandbox::Need::Baseline(w) if w.starts_with("inert"))),
        "{audit:?}"
    );
    let d = started(&rt);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    let lines: Vec<String> = d
        .logs
        .iter()
        .map(|l| {
            let f: Vec<String> = l.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{} {}", l.message, f.join(" "))
        })
        .collect();
    assert!(lines.len() >= 4, "{lines:?}");
    for line in &lines {
        assert!(
            line.contains("Error") && !line.contains("root:"),
            "every attempt fails: {line}"
        );
    }
    assert!(!marker.exists(), "the host is untouched");
    // Prebuilt (`hookrt build --out`), the component keeps its mark and
    // loads as a Python hook's; without the mark, a component importing the
    // same interfaces is refused.
    let wasm = fs::read(&rt.hooks()[0].component).unwrap();
    let prebuilt = TempAgent::new().file("hooks/escape.wasm", "");
    fs::write(prebuilt.path().join("hooks/escape.wasm"), &wasm).unwrap();
    let rt = load(prebuilt.path());
    assert_eq!(rt.hooks()[0].kind, SourceKind::Component);
    let d = started(&rt);
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    let mark = b"\x00\x15\x0ehookrt-profilepython";
    assert!(wasm.ends_with(mark));
    let unmarked = &wasm[..wasm.len() - mark.len()];
    fs::write(prebuilt.path().join("hooks/escape.wasm"), unmarked).unwrap();
    let text = load_problems(&prebuilt);
    assert!(
        text.contains("hookrt grants no filesystem access")
            && text.contains("hookrt grants no sockets"),
        "{text}"
    );
}

/// A Python hook in an endless loop ends out of fuel (or at its deadline);
/// one that allocates without end ends at its memory limit.
#[test]
fn a_hostile_python_hook_ends_out_of_fuel_or_out_of_memory() {
    let run = |hook: &str, limits: &str| {
        let config = format!("[hooks.{hook}]\n{limits}");
        started(&load(
            agent(&format!("hostile/hooks/{hook}"), hook, &config).path(),
        ))
    };
    let d = run("spin", "fuel = 20_000_000\ndeadline_ms = 60000\n");
    assert_eq!(d.outcome, Outcome::OutOfFuel, "{:?}", d.error);
    assert_eq!(d.fuel_used, 20_000_000);
    let d = run("spin", "fuel = 10_000_000_000\ndeadline_ms = 50\n");
    assert_eq!(d.outcome, Outcome::Timeout, "{:?}", d.error);
    let d = run("balloon", "fuel = 10_000_000_000\ndeadline_ms = 60000\n");
    assert_eq!(d.outcome, Outcome::OutOfMemory, "{:?}", d.error);
}

/// The default `instances` fits a Python hook; set below what its
/// interpreter needs, the load names the count it reached and the setting
/// that lets it start.
#[test]
fn a_python_hook_given_too_few_instances_is_refused_naming_the_setting() {
    let text = load_problems(&agent(
        "policy/hooks/guard",
        "guard",
        "[hooks.guard]\ninstances = 8\n",
    ));
    assert!(
        text.contains("has more core instances than its limit allows: instantiating it reached 9")
            && text.contains("`instances` is 8")
            && text.contains("raise `instances` in [hooks.\"guard\"]"),
        "{text}"
    );
}

/// Nothing the agent folder holds runs or is read while a Python hook is
/// built: a planted `sitecustomize.py`, `hookrt/` package, `pyproject.toml`
/// and `componentize-py.toml` change nothing, and an import of anything but
/// the SDK, the hook's own modules and the standard library is refused with
/// its file and line.
#[test]
fn a_python_build_runs_nothing_the_agent_folder_holds() {
    let marker = tempfile::tempdir().unwrap();
    let touch = format!(
        "open({:?}, 'w').write('ran')\n",
        marker.path().join("ran").display().to_string()
    );
    let guard =
        fs::read_to_string(repo().join("tests/fixtures/python/policy/hooks/guard.py")).unwrap();
    let a = TempAgent::new()
        .file("sitecustomize.py", &touch)
        .file("hooks/sitecustomize.py.txt", &touch)
        .file("hookrt/__init__.py", &touch)
        .file("pyproject.toml", "[tool.componentize-py]\n")
        .file("componentize-py.toml", "bindings = \"planted\"\n")
        .file(
            "hooks/guard.py",
            &format!("{guard}\n# built in a planted agent folder\n"),
        )
        .file(
            "hooks/fetcher.py",
            "import requests\nfrom hookrt import Hook\n",
        );
    let text = load_problems(&a);
    assert!(text.contains("hooks/fetcher.py:1"), "{text}");
    assert!(text.contains("requests"), "{text}");
    fs::remove_file(a.path().join("hooks/fetcher.py")).unwrap();
    let rt = load(a.path());
    let (d, r) = deliver(&rt, &shell("rm -rf /"));
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert!(matches!(verdict(r), Approval::Deny(_)));
    assert!(!marker.path().join("ran").exists(), "nothing planted ran");
}

/// The example agent's Python hook runs on its transcript with the others.
#[test]
fn the_example_agents_python_hook_runs_on_its_transcript() {
    let rt = load(&example("agent"));
    let hook = rt.hooks().iter().find(|h| h.kind == SourceKind::Python);
    let hook = hook.expect("the example agent has a Python hook");
    let id = hook.id();
    let ds = run_transcript(&rt);
    let own: Vec<&Delivery> = ds.iter().filter(|d| d.hook == id).collect();
    assert!(!own.is_empty());
    assert!(own.iter().all(|d| d.outcome == Outcome::Ok), "{own:?}");
    let _ = last_field;
}
