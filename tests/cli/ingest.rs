//! Ingest attacks on `hookrt run`, at scale: a 100 MiB line, a million events
//! in one file, JSON nested 100,000 levels deep, every envelope field of the
//! wrong type; and hostile hooks attacking 20 and 100 times in one process. Each is refused by line with what is wrong (or taken), the
//! rest of the stream is delivered, and the process's peak memory stays
//! within a fixed margin of the same agent's run on a small file: the
//! attack's size never reaches memory. Peak memory is the kernel's count for
//! the child (`getrusage`'s `ru_maxrss`), not a timing.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::common::{TempAgent, hookrt_command};

/// A hook that subscribes to `session.completed` only and logs its session, so a
/// run's deliveries say exactly which events reached a hook.
const ENDS: &str = r#"
use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct Ends;

impl Ends {
    fn ended(&mut self, event: &Event, _cx: &Context) -> HookResult {
        log::info(&format!("ended {}", event.coordinates().session), &[]);
        Ok(())
    }
}

hookrt_sdk::define_hook!(Ends {
    "session.completed" => ended,
});
"#;

fn agent() -> TempAgent {
    TempAgent::new().file("hooks/ends.rs", ENDS)
}

/// The envelope line of event `i`: a `session.started` of session `s<i/1000>`,
/// or, every 1,000th event, that session's `session.completed`.
fn event(i: u64) -> String {
    let session = i / 1000;
    let (kind, data) = if i % 1000 == 999 {
        ("session.completed", r#"{}"#)
    } else {
        ("session.started", r#"{"agent_name":"coder","model":"m"}"#)
    };
    format!(
        r#"{{"schema_version":1,"id":"e{i}","kind":"{kind}","timestamp":"2026-11-30T09:00:00Z","coordinates":{{"agent":"coder","session":"s{session}","sequence":{i}}},"data":{data}}}"#
    )
}

/// What a finished run left: its exit code, stderr, stdout's JSON lines and
/// its peak resident memory in bytes.
struct Run {
    code: Option<i32>,
    stderr: String,
    lines: Vec<Value>,
    peak_rss: u64,
}

impl Run {
    fn summary(&self) -> &Value {
        &self.lines.last().expect("a summary line")["summary"]
    }

    /// The sessions each `ends` delivery logged, in order.
    fn ended(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter(|l| l["hook"] == "ends")
            .map(|l| {
                assert_eq!(l["outcome"], "ok", "{l}");
                l["logs"][0]["message"]
                    .as_str()
                    .expect("a log line")
                    .to_owned()
            })
            .collect()
    }
}

/// Runs `hookrt run AGENT --events FILE --logs` with stdout and stderr in
/// files (a pipe could fill), and reads the child's peak memory from `wait4`.
fn run(agent: &Path, events: &Path) -> Run {
    let out = tempfile::tempdir().expect("tempdir");
    let (stdout, stderr) = (out.path().join("stdout"), out.path().join("stderr"));
    let mut command = hookrt_command();
    // SAFETY: the closure only returns; with it std forks instead of using
    // posix_spawn's vfork, whose child would count this test process's
    // memory as its own peak (Linux keeps the larger of the two at exec).
    unsafe {
        command.pre_exec(|| Ok(()));
    }
    #[allow(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, which also reads its peak memory"
    )]
    let child = command
        // The queue may hold many slow deliveries when the input ends: let
        // them all finish (the default gives them 30 s).
        .args([
            "run",
            agent.to_str().unwrap(),
            "--logs",
            "--drain-timeout",
            "3600",
            "--events",
        ])
        .arg(events)
        .env("NO_COLOR", "1")
        // Two malloc arenas: peak memory then says what the host keeps, not
        // how many arenas glibc opened for threads that met under load (a
        // CI run saw a 4 MiB jump from that alone).
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stdout(File::create(&stdout).unwrap())
        .stderr(File::create(&stderr).unwrap())
        .spawn()
        .expect("hookrt runs");
    let mut status = 0;
    // SAFETY: rusage is plain old data, and the pid is our own child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let status = std::process::ExitStatus::from_raw(status);
    let stderr = fs::read_to_string(&stderr).unwrap();
    let lines = fs::read_to_string(&stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    Run {
        code: status.code(),
        stderr,
        lines,
        // Linux gives ru_maxrss in KiB.
        peak_rss: usage.ru_maxrss as u64 * 1024,
    }
}

fn write_events(path: &Path, lines: impl Iterator<Item = String>) {
    let mut f = BufWriter::new(File::create(path).unwrap());
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    f.flush().unwrap();
}

/// The same agent's peak memory on 2,000 events: the baseline attacks are
/// measured against (the hook built, the engine and the pool reserved).
fn baseline(agent: &Path, dir: &Path) -> u64 {
    let small = dir.join("small.jsonl");
    write_events(&small, (0..2000).map(event));
    let run = run(agent, &small);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.ended(), ["ended s0", "ended s1"]);
    run.peak_rss
}

const MIB: u64 = 1024 * 1024;

#[test]
fn a_100_mib_line_is_skipped_by_number_in_bounded_memory_and_the_rest_is_delivered() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(agent.path(), dir.path());
    let path = dir.path().join("huge.jsonl");
    let mut f = BufWriter::new(File::create(&path).unwrap());
    writeln!(f, "{}", event(998)).unwrap();
    // One line of 100 MiB: a `data` string no envelope may hold.
    let pad = "x".repeat(MIB as usize);
    write!(f, r#"{{"schema_version":1,"data":""#).unwrap();
    for _ in 0..100 {
        f.write_all(pad.as_bytes()).unwrap();
    }
    writeln!(f, r#""}}"#).unwrap();
    writeln!(f, "{}", event(999)).unwrap();
    f.flush().unwrap();
    drop(f);
    let huge = 100 * MIB + r#"{"schema_version":1,"data":""}"#.len() as u64;

    let run = run(agent.path(), &path);
    eprintln!(
        "100 MiB line: peak {} KiB, baseline {} KiB",
        run.peak_rss / 1024,
        base / 1024
    );
    assert_eq!(run.code, Some(1), "a malformed line fails the run");
    assert!(
        run.stderr.contains(&format!(
            "line 2: {huge} bytes, longer than the {} bytes an envelope line may take; skipped",
            MIB + 64 * 1024
        )),
        "{}",
        run.stderr
    );
    assert_eq!(run.summary()["events"], 2);
    assert_eq!(run.summary()["malformed_lines"], 1);
    assert_eq!(run.ended(), ["ended s0"], "the line after it was delivered");
    assert!(
        run.peak_rss < base + 16 * MIB,
        "a 100 MiB line reached memory: peak {} MiB, baseline {} MiB",
        run.peak_rss / MIB,
        base / MIB
    );
}

#[test]
fn a_million_events_in_one_file_are_delivered_in_bounded_memory() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(agent.path(), dir.path());
    let path = dir.path().join("million.jsonl");
    write_events(&path, (0..1_000_000).map(event));

    let run = run(agent.path(), &path);
    eprintln!(
        "1 M events: peak {} KiB, baseline {} KiB",
        run.peak_rss / 1024,
        base / 1024
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let summary = run.summary();
    assert_eq!(summary["events"], 1_000_000);
    assert_eq!(summary["deliveries"], 1000);
    assert_eq!(summary["outcomes"]["ok"], 1000);
    assert_eq!(summary["malformed_lines"], 0);
    let want: Vec<String> = (0..1000).map(|s| format!("ended s{s}")).collect();
    assert_eq!(run.ended(), want, "every 1,000th event, in order");
    assert!(
        run.peak_rss < base + 32 * MIB,
        "memory grew with the stream: peak {} MiB, baseline {} MiB",
        run.peak_rss / MIB,
        base / MIB
    );
}

#[test]
fn deep_nesting_and_every_field_of_the_wrong_type_are_refused_naming_the_field() {
    let agent = agent();
    let dir = tempfile::tempdir().unwrap();
    let good: Value = serde_json::from_str(&event(0)).unwrap();
    // (field path, wrong value, what the message says after the field)
    let cases: &[(&str, Value, &str)] = &[
        (
            "schema_version",
            "1".into(),
            "invalid type: string \"1\", expected u32",
        ),
        (
            "id",
            5.into(),
            "invalid type: integer `5`, expected a string",
        ),
        (
            "kind",
            serde_json::json!([]),
            "invalid type: sequence, expected a string",
        ),
        (
            "timestamp",
            serde_json::json!({}),
            "invalid type: map, expected a string",
        ),
        (
            "coordinates",
            "here".into(),
            "invalid type: string \"here\", expected struct Coordinates",
        ),
        (
            "coordinates.agent",
            1.into(),
            "invalid type: integer `1`, expected a string",
        ),
        (
            "coordinates.session",
            true.into(),
            "invalid type: boolean `true`, expected a string",
        ),
        (
            "coordinates.turn",
            2.into(),
            "invalid type: integer `2`, expected a string",
        ),
        (
            "coordinates.step",
            serde_json::json!([1]),
            "invalid type: sequence, expected a string",
        ),
        (
            "coordinates.sequence",
            "x".into(),
            "invalid type: string \"x\", expected u64",
        ),
        (
            "coordinates.sequence",
            (-1).into(),
            "invalid value: integer `-1`, expected u64",
        ),
        (
            "coordinates.ordinal",
            1.5.into(),
            "invalid type: floating point `1.5`, expected u32",
        ),
        (
            "coordinates.subagent",
            serde_json::json!({}),
            "invalid type: map, expected a string",
        ),
        (
            "attempt",
            "2".into(),
            "invalid type: string \"2\", expected u32",
        ),
        (
            "idempotency_key",
            7.into(),
            "invalid type: integer `7`, expected a string",
        ),
        (
            "durability",
            "forever".into(),
            "unknown variant `forever`, expected `accepted` or `persisted`",
        ),
    ];
    let mut lines = Vec::new();
    for (field, value, _) in cases {
        let mut e = good.clone();
        let (parent, key) = match field.split_once('.') {
            Some((p, k)) => (&mut e[p], k),
            None => (&mut e, *field),
        };
        parent[key] = value.clone();
        lines.push(e.to_string());
    }
    // `data` of the wrong type is valid JSON but not an object.
    let mut e = good.clone();
    e["data"] = "text".into();
    lines.push(e.to_string());
    // 100,000 levels of arrays in `data`: refused at serde_json's 128, no stack overflow.
    let deep = format!(
        r#"{{"schema_version":1,"id":"deep","data":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    lines.push(deep);
    lines.push(event(999)); // still delivered after all of that
    let path = dir.path().join("wrong.jsonl");
    write_events(&path, lines.into_iter());

    let run = run(agent.path(), &path);
    assert_eq!(run.code, Some(1));
    let refusals: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(" line "))
        .collect();
    assert_eq!(refusals.len(), cases.len() + 2, "{}", run.stderr);
    for (n, (field, _, says)) in cases.iter().enumerate() {
        let line = refusals[n];
        let want = format!(
            "line {}: not a valid envelope: `{field}`: {says} at line 1 column ",
            n + 1
        );
        assert!(line.contains(&want), "want {want}\n got {line}");
    }
    let n = cases.len();
    assert!(
        refusals[n].ends_with(&format!("line {}: data must be a JSON object", n + 1)),
        "{}",
        refusals[n]
    );
    assert!(
        refusals[n + 1].contains(&format!(
            "line {}: not a valid envelope: `data`: nested more than 128 levels deep (recursion limit exceeded at line 1 column ",
            n + 2
        )),
        "{}",
        refusals[n + 1]
    );
    assert_eq!(run.summary()["malformed_lines"], n as u64 + 2);
    assert_eq!(run.summary()["events"], 1);
    assert_eq!(run.ended(), ["ended s0"]);
}

/// An agent with the witness and the attack component configured `attack`,
/// on `session.started` only.
fn attacker(attack: &str, budget: &str) -> TempAgent {
    TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .hook("hostile/attacks/attack.rs", "attack.rs")
        .config(&format!(
            "[hooks.attack]\ngrants = [\"log\", \"state\", \"metrics\"]\nmemory_mib = 16\n\
             output_bytes = 4096\n{budget}\n\
             config = {{ attack = \"{attack}\", on = \"session.started\" }}\n"
        ))
}

#[test]
fn host_memory_does_not_grow_with_the_number_of_attacks() {
    // Peak memory after 20 attacks and after 100 (at most 6 MiB more: 80 KiB
    // an attack would show), each run its own process:
    // whatever an attack costs the host (a lifted 8 MiB edit, a flood's
    // buffers) is given back, so 80 more attacks add nothing. (Against a
    // single attack the allocator's first growth would show: glibc keeps
    // freed large blocks for reuse, so the peak rises once, then stays.)
    let dir = tempfile::tempdir().unwrap();
    let sessions = |n: u64, path: &Path| {
        // Event i*1000 is session s<i>'s session.started.
        write_events(path, (0..n).map(|i| event(i * 1000)));
    };
    let (few, many) = (dir.path().join("few.jsonl"), dir.path().join("many.jsonl"));
    sessions(20, &few);
    sessions(100, &many);
    // Floods run to their end (the output cap, not fuel, stops them); the
    // rest stop at a small budget.
    let (small, flood) = (
        "fuel = 20_000_000\ndeadline_ms = 200",
        "fuel = 2_000_000_000\ndeadline_ms = 10_000",
    );
    let attacks = [
        ("huge_alloc", small, "out_of_memory"),
        ("memory_grow_loop", small, "out_of_memory"),
        ("stdout_flood", flood, "ok"),
        ("stderr_flood", flood, "ok"),
        ("state_big_values", flood, "error"),
        ("series_flood", flood, "ok"),
        ("huge_edit", flood, "ok"),
        ("invalid_utf8_log", small, "trap"),
        ("invalid_utf8_error", small, "trap"),
        ("exit", small, "trap"),
        ("spin", small, "out_of_fuel"),
    ];
    let mut report = Vec::new();
    for (attack, budget, outcome) in attacks {
        let agent = attacker(attack, budget);
        let peak = |events: &Path, n: usize| {
            let run = run(agent.path(), events);
            let outcomes: Vec<(String, String)> = run
                .lines
                .iter()
                .filter(|l| l.get("hook").is_some())
                .map(|l| {
                    let s = |k: &str| l[k].as_str().unwrap_or_default().to_owned();
                    (s("hook"), s("outcome"))
                })
                .collect();
            assert_eq!(run.summary()["left_unacked"], 0, "{attack}");
            let attacked = outcomes.iter().filter(|(h, _)| h == "attack");
            assert!(
                attacked.clone().count() == n && attacked.clone().all(|(_, o)| o == outcome),
                "{attack}: {outcomes:?}"
            );
            let witnessed = outcomes.iter().filter(|(h, _)| h == "witness");
            assert!(
                witnessed.clone().count() == n && witnessed.clone().all(|(_, o)| o == "ok"),
                "{attack}: the witness {outcomes:?}"
            );
            run.peak_rss
        };
        let (after_few, after_many) = (peak(&few, 20), peak(&many, 100));
        report.push(format!(
            "{attack}: peak {} KiB after 20, {} KiB after 100",
            after_few / 1024,
            after_many / 1024
        ));
        assert!(
            after_many < after_few + 6 * MIB,
            "{attack} leaves memory behind: peak {} KiB after 20 attacks, {} KiB after 100",
            after_few / 1024,
            after_many / 1024
        );
    }
    eprintln!("{}", report.join("\n"));
}
