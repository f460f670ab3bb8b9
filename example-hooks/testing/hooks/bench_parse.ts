// Benchmark hook, TypeScript: parses the event data as JSON (the SDK does,
// before the handler) and looks at one field: the same work as bench_parse.rs,
// to compare a TS hook's cost per delivery with a Rust hook's in
// runtime/core/benches/call.rs. No logging, no state.

import { defineHook } from "hookrt";

let seen = 0;

export default defineHook({
  "*"(event) {
    if ("call_id" in event.data) seen += 1;
  },
});
