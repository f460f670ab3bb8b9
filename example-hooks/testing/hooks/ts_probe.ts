// A TypeScript hook for tests/all/typescript.rs: one handler per thing the
// tests check (answers of each class, host imports, failures, limits).
// `config.mode` picks the failure `session.started` shows.

import { defineHook, log, metrics, state, type Approval } from "hookrt";

// Evaluated once, while the component is built (Wizer), inside WebAssembly:
// there is no Node.js here, so none of these exist.
const host = `process=${typeof (globalThis as Record<string, unknown>).process} require=${typeof (globalThis as Record<string, unknown>).require}`;

let mode = "ok";

export default defineHook<{ mode?: "ok" | "spin" | "alloc" | "throw" }>({
  configure(config) {
    mode = config.mode ?? "ok";
  },

  "session.started"(event) {
    if (mode === "spin") for (;;) {}
    if (mode === "alloc") {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array(1 << 20).fill(event.attempt));
    }
    if (mode === "throw") throw new Error("probe failed on purpose");
    log.info("built without node", { host });
  },

  "message.received"(event) {
    state.set("last", event.id);
    const last = new TextDecoder().decode(state.get("last"));
    metrics.counter("messages", 1, { role: event.data.role });
    log.info("state round trip", { last });
  },

  "actions.requested"(event) {
    return event.data.actions.map((a): Approval => (a.tool === "run_shell" ? { deny: `no shell: ${a.call_id}` } : "allow"));
  },

  "file.edit.requested"(event) {
    return { failed: `probe owns ${event.data.path}` };
  },

  "step.completed"(event) {
    const s = event.data.state;
    if (s === undefined) return;
    return { ...s, extras: { ...s.extras, ts_probe: { step: event.data.index } } };
  },
});
