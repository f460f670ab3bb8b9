"""Benchmark hook, Python: parses the event data as JSON (the SDK does, before
the handler) and looks at one field: the same work as bench_parse.rs and
bench_parse.ts, to compare a Python hook's cost per delivery with theirs in
runtime/core/benches/call.rs and `scripts/bench langs`. No logging, no state."""

from hookrt import Hook


class BenchParse(Hook):
    seen = 0

    def any(self, event, ctx):
        if "call_id" in event.data:
            BenchParse.seen += 1
