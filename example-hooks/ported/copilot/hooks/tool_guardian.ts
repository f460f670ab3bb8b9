// Ported from copilot-tool-guardian: github.com/github/awesome-copilot@ab7544d hooks/tool-guardian/guard-tool.sh
// Denies Copilot CLI's destructive tool calls (preToolUse): deleting the project,
// home or root, force pushes, hard resets, database drops and truncations, chmod 777,
// as the original does by answering `permissionDecision: deny`. The original logs
// each decision to .github/logs; here that is the hook's log. No grant.

import { defineHook, log, type Approval } from "hookrt";

const THREATS: Array<[string, RegExp]> = [
  ["destructive file operation", /\brm\s+-[a-zA-Z]*[rf][a-zA-Z]*\s+(\/|~|\.|\*|\$HOME)(\s|\/|$)/],
  ["force push", /\bgit\s+push\b.*(\s--force\b|\s-f\b|\s--force-with-lease\b)/],
  ["hard reset", /\bgit\s+reset\s+--hard\b/],
  ["database drop", /\bDROP\s+(TABLE|DATABASE|SCHEMA)\b/i],
  ["table truncation", /\bTRUNCATE\s+(TABLE\s+)?\w+/i],
  ["unbounded delete", /\bDELETE\s+FROM\s+\w+\s*(;|$)/i],
  ["world-writable permissions", /\bchmod\s+(-R\s+)?777\b/],
  ["disk format", /\bmkfs(\.\w+)?\b/],
];

function text(input: unknown): string {
  if (typeof input === "string") return input;
  if (input && typeof input === "object") return Object.values(input).filter((v) => typeof v === "string").join(" ");
  return "";
}

export default defineHook({
  "actions.requested"(event) {
    return event.data.actions.map((action): Approval => {
      const found = THREATS.find(([, regex]) => regex.test(text(action.input)));
      log.info("guard", { tool: action.tool, decision: found ? "deny" : "allow", threat: found?.[0] ?? "-" });
      if (found === undefined) return "abstain";
      return { deny: `Tool Guardian blocked a ${found[0]}: ${action.tool} call refused` };
    });
  },
});
