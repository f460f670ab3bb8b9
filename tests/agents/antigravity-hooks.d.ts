// Antigravity CLI's hook answers, written after antigravity.google/docs/hooks
// (Google publishes no package, types or schema of agy's hooks; read
// December 2026, for agy 1.1.10 and later): what each event's command hook
// may print on stdout. agy parses it strictly (protojson): an unknown field
// fails the hook, and on PreToolUse that denies the call. tests/serve/agents.rs
// checks every answer hookrt gives agy against these with `tsc --strict`.

/** PreToolUse: the decision on the call, and why. */
export interface PreToolUseOutput {
  /** Required where anything is printed (`{}` denies the call). */
  decision: "allow" | "deny" | "ask" | "force_ask";
  /** Shown to the agent or the user. */
  reason?: string;
  /** Permission rules granted with an allow, e.g. `command(npm test)`. */
  permissionOverrides?: string[];
}

/** Stop: `continue` keeps the agent going; any other value lets it stop. */
export interface StopOutput {
  decision?: string;
  /** Injected as a system message. */
  reason?: string;
}

/** PostToolUse: an empty object (hookrt prints nothing). */
export type PostToolUseOutput = Record<string, never>;

/** PreInvocation, PostInvocation: steps to inject, which hookrt never sends. */
export type InvocationOutput = Record<string, never>;
