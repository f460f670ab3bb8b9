// Tool timer: how long each tool call took, a warning for slow ones, and a
// per-tool summary when the session completes. A TypeScript hook (built by
// hookrt with componentize-js; see docs/typescript.md).
//
// It watches `actions.requested` without a vote (`observe:`): a bug here can
// never deny a tool call. Totals live in instance memory, so hookrt.toml
// keeps its instance (`instance = "reuse"`).

import { defineHook, log } from "hookrt";

interface Config {
  /** A call at least this long (ms) is logged as a warning. */
  slow_ms?: number;
}

interface Totals {
  calls: number;
  total_ms: number;
  max_ms: number;
  errors: number;
}

let slowMs = 5000;
const requestedAt = new Map<string, number>();
const perTool = new Map<string, Totals>();

export default defineHook<Config>({
  configure(config) {
    if (config.slow_ms !== undefined) {
      if (!Number.isInteger(config.slow_ms) || config.slow_ms < 0) {
        throw new Error(`slow_ms must be a whole number of milliseconds >= 0, not ${JSON.stringify(config.slow_ms)}`);
      }
      slowMs = config.slow_ms;
    }
  },

  "observe:actions.requested"(event) {
    const at = Date.parse(event.timestamp);
    for (const action of event.data.actions) requestedAt.set(action.call_id, at);
  },

  "action.result"(event) {
    const { call_id, tool, status, duration_ms } = event.data;
    const requested = requestedAt.get(call_id);
    requestedAt.delete(call_id);
    // From request to result: approval, queueing and the run itself.
    const waited = requested === undefined ? undefined : Date.parse(event.timestamp) - requested;
    const ms = duration_ms ?? waited;
    if (ms === undefined) return;
    const t = perTool.get(tool) ?? { calls: 0, total_ms: 0, max_ms: 0, errors: 0 };
    t.calls += 1;
    t.total_ms += ms;
    t.max_ms = Math.max(t.max_ms, ms);
    if (status === "error") t.errors += 1;
    perTool.set(tool, t);
    const fields = { tool, call_id, ms, waited_ms: waited ?? "-", status };
    if (ms >= slowMs) log.warn("slow tool call", { ...fields, slow_ms: slowMs });
    else log.info("tool call", fields);
  },

  "session.completed"() {
    const tools = [...perTool.keys()].sort();
    for (const tool of tools) {
      const t = perTool.get(tool)!;
      log.info("tool time", { tool, ...t, mean_ms: Math.round(t.total_ms / t.calls) });
    }
    perTool.clear();
    requestedAt.clear();
  },
});
