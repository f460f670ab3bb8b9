//! Containment: each hostile hook ends with its own outcome; nothing else fails.

use hookrt::Outcome;

use crate::common::{example, last_field, load, run_transcript, transcript};

#[test]
fn each_hostile_hook_is_contained_with_its_outcome_and_the_witness_never_fails() {
    let rt = load(&example("hostile"));
    let events = transcript().len();
    let deliveries = run_transcript(&rt);
    assert_eq!(
        deliveries.len(),
        events * 8,
        "8 wildcard hooks see every event"
    );

    let mut flaky = 0;
    for d in &deliveries {
        let expected = match d.hook.as_str() {
            "deep_recursion" | "panic" => Outcome::Trap,
            "fails" => Outcome::Error,
            "infinite_loop" => Outcome::OutOfFuel,
            "memory_bomb" => Outcome::OutOfMemory,
            "log_flood" | "witness" => Outcome::Ok,
            "flaky" => {
                flaky += 1;
                let n: u32 = last_field(d, "n_in_instance")
                    .unwrap_or_else(|| {
                        panic!(
                            "flaky logs its count; {} on {}: {:?} {:?}",
                            d.outcome, d.event_id, d.error, d.logs
                        )
                    })
                    .parse()
                    .unwrap();
                assert_eq!(
                    n,
                    (flaky - 1) % 3 + 1,
                    "a trapped instance is replaced: the count restarts at 1"
                );
                if n == 3 { Outcome::Trap } else { Outcome::Ok }
            }
            other => panic!("unexpected hook {other}"),
        };
        assert_eq!(
            d.outcome, expected,
            "{} on {}: {:?}",
            d.hook, d.event_id, d.error
        );
    }
    let by = |hook: &'static str| deliveries.iter().filter(move |d| d.hook == hook);
    // Every hook saw every event: the `.all(..)` checks below are over full lists.
    for hook in [
        "panic",
        "fails",
        "log_flood",
        "witness",
        "deep_recursion",
        "memory_bomb",
    ] {
        assert_eq!(by(hook).count(), events, "{hook}");
    }
    assert!(by("panic").all(|d| {
        d.error
            .as_deref()
            .unwrap_or("")
            .contains("hostile hook panicked on purpose")
    }));
    assert!(by("fails").all(|d| d.error.as_deref().unwrap_or("").starts_with("refusing:")));
    assert!(
        by("log_flood").all(|d| d.output_truncated),
        "the flood is cut at output_bytes"
    );
    let kept: usize = by("log_flood")
        .map(|d| {
            d.logs
                .iter()
                .filter(|l| !l.message.starts_with("[hookrt]"))
                .map(|l| l.message.len())
                .sum::<usize>()
        })
        .max()
        .unwrap();
    assert!(
        kept <= 4096 && kept > 4096 - 200,
        "log_flood kept {kept} bytes of log messages over its 4096-byte cap"
    );
    assert!(
        by("log_flood").all(|d| d.logs.last().is_some_and(
            |l| l.message == "[hookrt] output cut at the 4096-byte output_bytes limit"
        )),
        "a marker says where the output was cut"
    );
    assert_eq!(by("witness").count(), events);
}

#[test]
fn a_panic_names_the_authors_file_and_line_then_the_trap_and_the_fix() {
    let agent = crate::common::TempAgent::new().hook("hostile/hooks/panic.rs", "panic.rs");
    let rt = load(agent.path());
    let d = rt.dispatch(&transcript()[0]).unwrap();
    let error = d.deliveries[0].error.clone().unwrap_or_default();
    let file = rt.hooks()[0].source.display().to_string();
    assert!(file.ends_with("hooks/panic.rs"), "{file}");
    assert!(
        error.starts_with(&format!(
            "panicked at {file}:10:9: hostile hook panicked on purpose while handling evt_0001; \
             the hook panicked, which traps its instance (wasm trap: "
        )),
        "{error}"
    );
    assert!(
        error.ends_with(
            "fix: return Err(HookError::new(..)) instead of panicking, or fix the code at that line"
        ),
        "{error}"
    );
    assert!(!error.contains("src/lib.rs"), "{error}");
    assert!(!d.deliveries[0].console.contains("src/lib.rs"));
}
