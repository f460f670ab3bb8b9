//! Scopes: primary hooks see primary events only, a subagent's hooks see that
//! subagent's events only, and an aggregate observer sees every scope's ids
//! without data.

use hookrt::Envelope;
use hookrt::Scope;
use hookrt::hooks::discover;

use crate::common::{TempAgent, last_field, load, transcript};

const REPORTER: &str = "testing/hooks/scope_reporter.rs";

/// The transcript, then the same events as subagent `researcher`'s.
fn both_scopes() -> Vec<Envelope> {
    let primary = transcript();
    let sub = primary.iter().map(|e| {
        let mut e = e.clone();
        e.id = format!("sub-{}", e.id);
        e.coordinates.subagent = Some("researcher".into());

        e
    });
    primary.clone().into_iter().chain(sub).collect()
}

fn agent() -> TempAgent {
    TempAgent::new()
        .hook(REPORTER, "reporter.rs")
        .hook(REPORTER, "observer.rs")
        .file(
            "subagents/researcher/hooks/reporter.rs",
            &std::fs::read_to_string(crate::common::example(REPORTER)).unwrap(),
        )
        .config(
            "aggregate = [\"observer\"]\n[subagents.researcher.hooks.reporter]\nfuel = 7_000_000\n",
        )
}

#[test]
fn subagent_hooks_are_discovered_with_their_scope_and_relative_slugs() {
    let agent = agent();
    let d = discover(agent.path()).unwrap();
    let found: Vec<(&str, &Scope)> = d
        .hooks
        .iter()
        .map(|h| (h.slug.as_str(), &h.scope))
        .collect();
    assert_eq!(
        found,
        [
            ("observer", &Scope::Primary),
            ("reporter", &Scope::Primary),
            ("reporter", &Scope::Subagent("researcher".into()))
        ]
    );
    let rt = load(agent.path());
    let ids: Vec<String> = rt.hooks().iter().map(|h| h.id()).collect();
    assert_eq!(
        ids,
        ["observer", "reporter", "subagents/researcher/reporter"]
    );
    assert_eq!(
        rt.hooks()[2].settings.limits.fuel,
        7_000_000,
        "[subagents.researcher.hooks.reporter] applies"
    );
    assert_eq!(
        rt.hooks()[0].scope,
        Scope::Aggregate,
        "named in `aggregate`"
    );
}

#[test]
fn each_scope_sees_only_its_own_events_and_the_aggregate_sees_ids_without_data() {
    let agent = agent();
    let rt = load(agent.path());
    let events = both_scopes();
    for e in &events {
        let report = rt.dispatch(e).unwrap();
        let by = |id: &str| {
            report
                .deliveries
                .iter()
                .filter(|d| d.hook == id)
                .collect::<Vec<_>>()
        };
        let primary = e.coordinates.subagent.is_none();
        assert_eq!(
            by("reporter").len(),
            usize::from(primary),
            "{}: primary hook",
            e.id
        );
        assert_eq!(
            by("subagents/researcher/reporter").len(),
            usize::from(!primary),
            "{}: subagent hook",
            e.id
        );
        let own = if primary {
            by("reporter")[0]
        } else {
            by("subagents/researcher/reporter")[0]
        };
        assert_eq!(
            last_field(own, "scope").unwrap(),
            if primary {
                "primary"
            } else {
                "subagent:researcher"
            }
        );
        assert_eq!(
            last_field(own, "data_len")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            e.data.to_string().len(),
            "own scope: full data"
        );

        let observed = by("observer");
        assert_eq!(observed.len(), 1, "the aggregate observer sees every event");
        assert_eq!(
            last_field(observed[0], "event_id").unwrap(),
            e.id,
            "ids kept"
        );
        assert_eq!(last_field(observed[0], "scope").unwrap(), "aggregate");
        assert_eq!(
            last_field(observed[0], "data_len").unwrap(),
            "2",
            "data removed: `{{}}`"
        );
    }
}

#[test]
fn bad_subagent_folders_are_refused() {
    let agent = TempAgent::new()
        .file("hooks/a.rs", "")
        .file("subagents/Bad Id/hooks/x.rs", "")
        .file("subagents/ok/channels/slack.rs", "")
        .file("subagents/ok/hooks/x.rs", "");
    let problems: Vec<String> = discover(agent.path())
        .expect_err("refused")
        .0
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("unsafe subagent id `Bad Id`"));
    assert!(problems[1].starts_with("a `channels/` folder is not supported"));
}

#[test]
fn a_subagent_hook_keeps_its_own_state_apart_from_the_primary_hook_of_the_same_slug() {
    let counter =
        std::fs::read_to_string(crate::common::example("testing/hooks/state_counter.rs")).unwrap();
    let agent = TempAgent::new()
        .file("hooks/counter.rs", &counter)
        .file("subagents/researcher/hooks/counter.rs", &counter)
        .config("[hooks.counter]\ngrants = [\"log\", \"state\"]\n[subagents.researcher.hooks.counter]\ngrants = [\"log\", \"state\"]\n");
    let rt = load(agent.path());
    let counts: Vec<(String, String)> = both_scopes()
        .iter()
        .take(40)
        .flat_map(|e| rt.dispatch(e).unwrap().deliveries)
        .map(|d| (d.hook.clone(), last_field(&d, "count").unwrap()))
        .collect();
    let of = |hook: &str| {
        counts
            .iter()
            .filter(|(h, _)| h == hook)
            .map(|(_, c)| c.parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(of("counter"), (1..=38).collect::<Vec<_>>());
    assert_eq!(
        of("subagents/researcher/counter"),
        [1, 2],
        "the subagent's count starts at 1: its own namespace"
    );
}

#[test]
fn the_service_delivers_to_subagent_hooks_by_their_id() {
    let agent = agent();
    let db = agent.path().join("journal.db");
    let (service, seen) = crate::journal::start(agent.path(), Some(&db));
    let events: Vec<Envelope> = both_scopes()
        .into_iter()
        .filter(|e| e.coordinates.subagent.is_some())
        .take(3)
        .collect();
    let stats = crate::journal::run_all(service, &events);
    let hooks: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| d.hook.clone())
        .collect();
    assert_eq!(
        hooks,
        ["subagents/researcher/reporter", "observer"].repeat(3)
    );
    assert_eq!(
        (
            stats.optional_failures,
            hookrt::journal::Journal::open(&db)
                .unwrap()
                .status()
                .unwrap()
                .dead
        ),
        (0, 0)
    );
}

/// A tool approval and a file edit of subagent `sub`.
fn decisions_of(sub: &str) -> Vec<Envelope> {
    let all = transcript();
    ["actions.requested", "file.edit.requested"]
        .iter()
        .map(|kind| all.iter().find(|e| e.kind == *kind).unwrap().clone())
        .map(|mut e| {
            e.id = format!("{sub}-{}", e.id);
            e.coordinates.subagent = Some(sub.into());
            e
        })
        .collect()
}

#[test]
fn a_decision_of_a_subagent_no_hooks_serve_fails_closed_unless_on_unscoped_says_abstain() {
    use hookrt::{Approval, FileEdit, Resolution};
    // allow_all would let everything through; an aggregate observer sees it all.
    let agent = TempAgent::new()
        .hook("testing/hooks/allow_all.rs", "allow_all.rs")
        .hook(REPORTER, "observer.rs")
        .config("aggregate = [\"observer\"]\n");
    let rt = load(agent.path());
    let mut kinds = Vec::new();
    for e in decisions_of("ghost") {
        kinds.push(e.kind.clone());
        match rt.dispatch(&e).unwrap().resolution {
            Some(Resolution::ToolApproval(t)) => {
                assert!(!t.calls.is_empty());
                for call in &t.calls {
                    let Approval::Deny(why) = &call.verdict else {
                        panic!("{e:?}: {call:?}")
                    };
                    assert!(why.contains("subagent `ghost` has no hooks"), "{why}");
                    assert_eq!(call.decided_by.as_deref(), Some("hookrt:unscoped"));
                }
            }
            Some(Resolution::FileEdit(f)) => {
                assert!(
                    matches!(&f.result, FileEdit::Failed(why) if why.contains("ghost")),
                    "{f:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(kinds, ["actions.requested", "file.edit.requested"]);
    // The primary scope is decided by its hooks, as before.
    let primary = transcript()
        .into_iter()
        .find(|e| e.kind == "actions.requested")
        .unwrap();
    let Some(Resolution::ToolApproval(t)) = rt.dispatch(&primary).unwrap().resolution else {
        panic!()
    };
    assert!(t.calls.iter().all(|c| c.verdict == Approval::Allow));

    // A served subagent is decided by its own hooks; `on_unscoped = "abstain"`
    // leaves an unserved one's to the agent.
    let served = TempAgent::new()
        .hook("testing/hooks/allow_all.rs", "allow_all.rs")
        .file(
            "subagents/ghost/hooks/allow_all.rs",
            &std::fs::read_to_string(crate::common::example("testing/hooks/allow_all.rs")).unwrap(),
        )
        .config("on_unscoped = \"abstain\"\n");
    let rt = load(served.path());
    let ask = &decisions_of("ghost")[0];
    let Some(Resolution::ToolApproval(t)) = rt.dispatch(ask).unwrap().resolution else {
        panic!()
    };
    assert!(
        t.calls.iter().all(|c| c.verdict == Approval::Allow),
        "{t:?}"
    );
    let ask = &decisions_of("other")[0];
    let Some(Resolution::ToolApproval(t)) = rt.dispatch(ask).unwrap().resolution else {
        panic!()
    };
    assert!(
        t.calls.iter().all(|c| c.verdict == Approval::Abstain),
        "{t:?}"
    );
}
