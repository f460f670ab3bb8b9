//! The `read` grant's cost: one delivery whose hook reads a 100 KB file of
//! the project through the grant, beside the same hook not reading, both
//! through hookrt with a warm instance (`instance = "reuse"`), and the
//! same read by the host alone (`std::fs::read`, the floor).
//!
//! Run: `cargo bench --release -p hookrt --bench read` (figures in
//! docs/performance.md).

use criterion::{Criterion, criterion_group, criterion_main};
use hookrt::{Envelope, Runtime};

mod support;
use support::{opts, transcript};

/// Bytes of the file the hook reads.
const FILE_BYTES: usize = 100 * 1024;

/// A `*` hook that reads `data.bin` (checking its size) when `reads`, and
/// otherwise does nothing.
fn hook(reads: bool) -> String {
    let body = if reads {
        "let bytes = read::read_file(\"data.bin\")?;\n        if bytes.len() != 102_400 {\n            return Err(HookError::new(\"short read\"));\n        }"
    } else {
        "let _ = event;"
    };
    format!(
        "use hookrt_sdk::prelude::*;\n\n#[derive(Default)]\npub struct Reader;\n\n#[hookrt_sdk::hook]\nimpl Hook for Reader {{\n    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {{\n        let _ = event;\n        {body}\n        Ok(())\n    }}\n}}\n"
    )
}

/// An agent of one such hook, loaded for a project holding `data.bin`.
fn runtime(reads: bool, project: &std::path::Path) -> (tempfile::TempDir, Runtime) {
    let agent = tempfile::tempdir().unwrap();
    std::fs::create_dir(agent.path().join("hooks")).unwrap();
    std::fs::write(agent.path().join("hooks/reader.rs"), hook(reads)).unwrap();
    let grants = if reads {
        "[\"log\", \"read\"]"
    } else {
        "[\"log\"]"
    };
    std::fs::write(
        agent.path().join("hookrt.toml"),
        format!("[defaults]\ninstance = \"reuse\"\n\n[hooks.\"reader\"]\ngrants = {grants}\n"),
    )
    .unwrap();
    let mut o = opts(agent.path());
    o.project = Some(project.to_path_buf());
    let rt =
        Runtime::load_blocking(agent.path(), &o, &mut |_| {}).unwrap_or_else(|p| panic!("{p}"));
    (agent, rt)
}

fn one(rt: &Runtime, event: &Envelope) {
    let d = rt.dispatch(event).unwrap();
    assert!(
        d.deliveries.iter().all(|d| d.outcome.to_string() == "ok"),
        "{:?}",
        d.deliveries
    );
}

fn read(c: &mut Criterion) {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("data.bin"), vec![b'x'; FILE_BYTES]).unwrap();
    let event = transcript()
        .into_iter()
        .find(|e| e.kind == "message.completed")
        .unwrap();
    let mut g = c.benchmark_group("read");
    let (_a, reading) = runtime(true, project.path());
    let (_b, idle) = runtime(false, project.path());
    g.bench_function("hook_reads_100kb", |b| b.iter(|| one(&reading, &event)));
    g.bench_function("hook_does_not_read", |b| b.iter(|| one(&idle, &event)));
    let file = project.path().join("data.bin");
    g.bench_function("host_reads_100kb", |b| {
        b.iter(|| std::fs::read(&file).unwrap().len())
    });
    g.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
