/**
 * hookrt's TypeScript SDK: `defineHook`, typed events, `log`, `state`, `metrics`,
 * `addContext`.
 *
 * A hook file (`hooks/NAME.ts` or `.js`) imports this module as `"hookrt"` and
 * default-exports `defineHook({...})`: one handler per event kind it handles,
 * keyed by the kind (`"message.completed"`), `"observe:<kind>"` to watch a
 * decision, edit or gate event without a vote, `"rewrite:<kind>"` to vote on
 * `actions.requested` or `permission.requested` and rewrite the call's input,
 * or `"*"` for every event. hookrt bundles the file with this module only (no
 * other import resolves), and componentize-js turns it into a component for
 * the `define-hook` world of `wit/v0.4.0/hook.wit`; this module produces the
 * world's exports (`configure`, `subscriptions`, `handle`).
 *
 * Types follow the WIT and the Rust SDK's event structs (`guest-sdk/src/events.rs`):
 * the data of each common kind is typed, and a handler's return type follows
 * the event's class: observe -> `void`, `actions.requested` -> one `Approval`
 * per requested call (`rewrite:actions.requested` -> one `CallAnswer`),
 * `file.edit.requested` -> a `FileEditAnswer`, `step.completed` /
 * `turn.completed` -> the edited `AgentInput` (or nothing), the block gates ->
 * a `BlockAnswer`, `turn.stopping` -> a `StopAnswer`, `permission.requested`
 * -> a `PermissionAnswer`. Any handler may add text to the model's context
 * with `ctx.addContext(text)` (or `addContext(text)`).
 */

import { log as hostLog } from "hookrt:hook/log@0.4.0";
import * as hostMetrics from "hookrt:hook/metrics@0.4.0";
import * as hostState from "hookrt:hook/state@0.4.0";

// ---------------------------------------------------------------- event data

/** Token counts reported by the model. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** How a tool call ended. */
export type ActionStatus = "ok" | "error";

/** One message of the agent input state. `content` may hold secrets: do not log it. */
export interface InputMessage {
  id: string;
  role: string;
  content?: string;
  [other: string]: unknown;
}

/** One tool call the model made. */
export interface InputToolCall {
  call_id: string;
  tool: string;
  input?: unknown;
  [other: string]: unknown;
}

/** The result of one tool call, paired with it by `call_id`. */
export interface InputToolResult {
  call_id: string;
  status: ActionStatus;
  output?: unknown;
  [other: string]: unknown;
}

/**
 * The agent input state carried by `step.completed` and `turn.completed`. An
 * edit must keep every call paired with one result, the first
 * `immutable_history` messages and `progress` unchanged; keep a hook's own
 * data under `extras[<its slug>]`. Unknown fields are kept as they are.
 */
export interface AgentInput {
  messages: InputMessage[];
  tool_calls: InputToolCall[];
  tool_results: InputToolResult[];
  extras: Record<string, unknown>;
  progress?: unknown;
  immutable_history: number;
  [other: string]: unknown;
}

/** One tool call the model asked for. */
/** One message of the conversation before a prompt (Anthropic's inference hooks send them). */
export interface PriorMessage {
  role: string;
  text: string;
}

export interface RequestedAction {
  call_id: string;
  tool: string;
  input?: unknown;
}

/** Why a session or turn failed (also raised once when a critical hook fails). */
export interface Failure {
  reason: string;
  hook?: string;
  event_id?: string;
  outcome?: string;
  message?: string;
}

/** The data of each kind the SDK types; other kinds get `Record<string, unknown>`. */
export interface EventDataMap {
  "session.started": { agent_name: string; model?: string };
  "session.completed": { turns: number };
  "session.failed": Failure;
  "turn.started": { input_message_id?: string };
  "turn.completed": { steps: number; usage?: Usage; state?: AgentInput };
  "turn.failed": Failure;
  "step.started": { index: number };
  "step.completed": { index: number; finish_reason: string; state?: AgentInput };
  "message.received": { message_id: string; role: string; content: string };
  "message.completed": {
    message_id: string;
    role: string;
    content: string;
    finish_reason?: string;
    usage?: Usage;
  };
  "actions.requested": { actions: RequestedAction[] };
  "action.result": {
    call_id: string;
    tool: string;
    status: ActionStatus;
    output?: unknown;
    error?: string;
    duration_ms?: number;
  };
  "input.requested": { request_id: string; prompt: string };
  "input.received": { request_id: string; answer: string };
  "file.edit.requested": {
    path: string;
    content: string;
    before_content?: string;
    global_storage: boolean;
  };
  "prompt.submitted": { prompt: string; source?: string; history?: PriorMessage[] };
  "turn.stopping": { continued: boolean; last_message?: string };
  "permission.requested": { tool: string; input: unknown; call_id?: string; suggestions?: unknown };
  "task.created": { task_id: string; subject: string; description?: string };
  "config.changed": { source: string; path?: string };
}

/** Kinds of the vocabulary without a typed data shape here (Eve's stream kinds). */
export type OtherKind =
  | "session.waiting" | "turn.waiting" | "turn.cancelled" | "step.failed"
  | "reasoning.appended" | "reasoning.completed" | "message.appended" | "result.completed"
  | "action.input.appended" | "action.partial" | "input.resolved" | "approval.candidate"
  | "approval.settled" | "task.started" | "task.detached" | "task.settled" | "task.ended"
  | "agent.started" | "compaction.requested" | "compaction.completed" | "context.cleared"
  | "authorization.required" | "authorization.completed" | "subagent.called"
  | "subagent.started" | "subagent.event" | "subagent.completed";

/** Every kind a hook can subscribe to by name (plus `custom.*` kinds). */
export type Kind = keyof EventDataMap | OtherKind | `custom.${string}`;

/** The data of `K`. */
export type DataOf<K extends string> = K extends keyof EventDataMap
  ? EventDataMap[K]
  : Record<string, unknown>;

// ---------------------------------------------------------------- envelope

/** Where in the agent's life the event happened. Stable across retries. */
export interface Coordinates {
  agent: string;
  session: string;
  turn?: string;
  step?: string;
  /** Position in the session's event stream (0-based). */
  sequence: number;
  subagent?: string;
}

/** One delivered event (envelope v1) with its data parsed. */
export interface HookEvent<K extends string = string> {
  id: string;
  kind: K;
  /** RFC 3339, as the agent stamped it. */
  timestamp: string;
  coordinates: Coordinates;
  /** 1 on first delivery, more when the runtime delivers it again. */
  attempt: number;
  /** Derived from stable coordinates, never from the attempt. */
  idempotencyKey: string;
  durability: "accepted" | "persisted";
  data: DataOf<K>;
}

/** Whose events a hook receives. */
export type Scope =
  | { tag: "primary" }
  | { tag: "subagent"; val: string }
  | { tag: "aggregate" };

/** What an event lets a hook do. */
export type EventClass = "observe" | "decision" | "edit" | "gate";

/** What the runtime tells a handler about the delivery it is running. */
export interface Context {
  /** The subscription that matched: the kind, `observe:<kind>`, `rewrite:<kind>` or `*`. */
  handler: string;
  slug: string;
  /** Wall-clock milliseconds left for this delivery when it started. */
  budgetMs: number;
  class: EventClass;
  agent: string;
  session: string;
  scope: Scope;
  transport: { kind: string; detail?: string };
  /** Adds `text` to the model's context for this event (same as `addContext`). */
  addContext(text: string): void;
}

// ---------------------------------------------------------------- answers

/** A hook's answer for one requested tool call. */
export type Approval = "abstain" | "allow" | { ask: string } | { deny: string };

/** A hook's answer to `file.edit.requested`. */
export type FileEditAnswer = "not-handled" | "applied" | { failed: string };

/**
 * A `rewrite:actions.requested` handler's answer for one requested call: its
 * approval and, optionally, the call's whole new input (a JSON object).
 * Rewrites chain in registration order; a deny by any hook drops them all.
 */
export interface CallAnswer {
  approval: Approval;
  rewrite?: Record<string, unknown>;
}

/**
 * The answer to a block gate (`prompt.submitted`, `compaction.requested`,
 * `task.created`, `config.changed`): `"pass"`, or `{ block: "reason" }` to stop
 * what the event announces (the reason is shown to the user).
 */
export type BlockAnswer = "pass" | { block: string };

/**
 * The answer to `turn.stopping`: `"stop"` lets the turn end, `{ continue:
 * "what to do next" }` keeps it going (at most `max_continues` in a row).
 */
export type StopAnswer = "stop" | { continue: string };

/**
 * The answer to `permission.requested` (the agent is about to ask a human):
 * `"abstain"` (the human is asked), `"allow"`, `{ allow: { input } }` (allowed
 * with the call's whole input rewritten: from `rewrite:permission.requested`
 * only) or `{ deny: { message, interrupt? } }` (`interrupt: true` also stops
 * the turn).
 */
export type PermissionAnswer =
  | "abstain"
  | "allow"
  | { allow: { input: Record<string, unknown> } }
  | { deny: { message: string; interrupt?: boolean } };

/** A `permission.requested` answer without a rewrite (a plain subscription's). */
export type PlainPermissionAnswer = Exclude<PermissionAnswer, { allow: unknown }>;

/** Decision kinds and what a handler of one answers. */
interface DecisionAnswers {
  "actions.requested": Approval[];
  "file.edit.requested": FileEditAnswer;
  "permission.requested": PlainPermissionAnswer;
}

/** Kinds whose call input a `rewrite:<kind>` handler may rewrite, and what it answers. */
interface RewriteAnswers {
  "actions.requested": CallAnswer[];
  "permission.requested": PermissionAnswer;
}

/** Edit kinds: a handler returns the whole edited state, or nothing. */
type EditKind = "step.completed" | "turn.completed";

/** Gate kinds that may be blocked. */
export type BlockGateKind = "prompt.submitted" | "compaction.requested" | "task.created" | "config.changed";

/** What a handler for `K` may return (observe: nothing). */
export type AnswerOf<K extends string> = K extends keyof DecisionAnswers
  ? DecisionAnswers[K] | void
  : K extends EditKind
    ? AgentInput | void
    : K extends BlockGateKind
      ? BlockAnswer | void
      : K extends "turn.stopping"
        ? StopAnswer | void
        : void;

/** A handler for kind `K`. Handlers are synchronous; throw to fail the delivery. */
export type Handler<K extends string> = (event: HookEvent<K>, ctx: Context) => AnswerOf<K>;

/** Decision, edit and gate kinds, which `observe:<kind>` can watch without a vote. */
export type ObservableKind = keyof DecisionAnswers | EditKind | BlockGateKind | "turn.stopping";

/** Kinds a `rewrite:<kind>` handler may rewrite. */
export type RewritableKind = keyof RewriteAnswers;

/** What `defineHook` takes. */
export type HookDefinition<Config> = {
  /** Receives the `config` table from `hookrt.toml` (`{}` when none); throw to refuse the hook at load. */
  configure?: (config: Config) => void;
  /** Every event, after the event-specific handlers. Observes only (it may add context). */
  "*"?: (event: HookEvent, ctx: Context) => void;
} & { [K in Kind]?: Handler<K> } & {
  [K in `observe:${ObservableKind}`]?: (
    event: HookEvent<K extends `observe:${infer E}` ? E : never>,
    ctx: Context,
  ) => void;
} & {
  [K in RewritableKind as `rewrite:${K}`]?: (event: HookEvent<K>, ctx: Context) => RewriteAnswers[K] | void;
};

/** What `defineHook` returns: the world's exports. Default-export it. */
export interface DefinedHook {
  readonly __hookrt: "define-hook@0.4.0";
  configure(config: string): void;
  subscriptions(): string[];
  handle(envelope: WitEnvelope, context: WitContext): WitReply;
}

// ---------------------------------------------------------------- WIT shapes (componentize-js)

interface WitEnvelope {
  schemaVersion: number;
  id: string;
  kind: string;
  timestamp: string;
  coordinates: {
    agent: string;
    session: string;
    turn?: string;
    step?: string;
    sequence: bigint;
    subagent?: string;
  };
  attempt: number;
  idempotencyKey: string;
  durability: "accepted" | "persisted";
  data: string;
}

interface WitContext {
  handler: string;
  slug: string;
  budgetMs: bigint;
  class: EventClass;
  agent: string;
  session: string;
  scope: Scope;
  transport: { kind: string; detail?: string };
}

type WitApproval =
  | { tag: "abstain" }
  | { tag: "allow" }
  | { tag: "ask"; val: string }
  | { tag: "deny"; val: string };
type WitFileEdit = { tag: "not-handled" } | { tag: "applied" } | { tag: "failed"; val: string };
type WitCallAnswer = { approval: WitApproval; rewrite?: string };
type WitGate = { tag: "pass" } | { tag: "block"; val: string } | { tag: "continue-turn"; val: string };
type WitPermission =
  | { tag: "abstain" }
  | { tag: "allow"; val: string | undefined }
  | { tag: "deny"; val: { message: string; interrupt: boolean } };
type WitResponse =
  | { tag: "none" }
  | { tag: "approvals"; val: WitApproval[] }
  | { tag: "file-edit"; val: WitFileEdit }
  | { tag: "edit"; val: string }
  | { tag: "calls"; val: WitCallAnswer[] }
  | { tag: "gate"; val: WitGate }
  | { tag: "permission"; val: WitPermission };
type WitReply = { response: WitResponse; context?: string };

// ---------------------------------------------------------------- host imports

/** A log field value: rendered as text. */
export type FieldValue = string | number | boolean | bigint | null | undefined;
type Level = "trace" | "debug" | "info" | "warn" | "error";

function emit(level: Level, message: string, fields?: Record<string, FieldValue>): void {
  const list = Object.entries(fields ?? {}).map(([key, value]) => ({ key, value: String(value) }));
  hostLog(level, message, list);
}

/** Structured logging to the host (granted by default). */
export const log = {
  trace: (message: string, fields?: Record<string, FieldValue>) => emit("trace", message, fields),
  debug: (message: string, fields?: Record<string, FieldValue>) => emit("debug", message, fields),
  info: (message: string, fields?: Record<string, FieldValue>) => emit("info", message, fields),
  warn: (message: string, fields?: Record<string, FieldValue>) => emit("warn", message, fields),
  error: (message: string, fields?: Record<string, FieldValue>) => emit("error", message, fields),
};

/** Metrics aggregated per hook by the host. Needs the `metrics` grant. */
export const metrics = {
  /** Adds `delta` (a whole number >= 0) to the counter `name`. */
  counter(name: string, delta = 1, labels: Record<string, string> = {}): void {
    hostMetrics.counter(name, BigInt(Math.max(0, Math.trunc(delta))), Object.entries(labels));
  },
  /** Sets the gauge `name` to `value`. */
  gauge(name: string, value: number, labels: Record<string, string> = {}): void {
    hostMetrics.gauge(name, value, Object.entries(labels));
  },
};

const utf8 = { encode: (s: string) => new TextEncoder().encode(s), decode: (b: Uint8Array) => new TextDecoder().decode(b) };

/** Per-hook key-value state kept by the host across restarts. Needs the `state` grant. */
export const state = {
  /** The bytes stored under `key`, if any. */
  get(key: string): Uint8Array | undefined {
    return hostState.get(key) ?? undefined;
  },
  /** Stores `value` (bytes, or a string as UTF-8); throws when a size cap would be exceeded. */
  set(key: string, value: Uint8Array | string): void {
    const bytes = typeof value === "string" ? utf8.encode(value) : value;
    try {
      hostState.set(key, bytes);
    } catch (e) {
      throw new Error(`state.set(${JSON.stringify(key)}): ${errorText(e)}`);
    }
  },
  /** Removes `key` (no error when absent). */
  delete(key: string): void {
    hostState.delete(key);
  },
  /** The value under `key` parsed as JSON, if any. */
  getJson<T = unknown>(key: string): T | undefined {
    const bytes = state.get(key);
    return bytes === undefined ? undefined : (JSON.parse(utf8.decode(bytes)) as T);
  },
  /** Stores `value` as JSON under `key`. */
  setJson(key: string, value: unknown): void {
    state.set(key, JSON.stringify(value));
  },
};

// ---------------------------------------------------------------- defineHook

const OBSERVE_PREFIX = "observe:";
const REWRITE_PREFIX = "rewrite:";

/** The block gates, which take a `BlockAnswer` (`turn.stopping` takes a `StopAnswer`). */
const BLOCK_GATES = ["prompt.submitted", "compaction.requested", "task.created", "config.changed"];

/** SpiderMonkey's report of an allocation the memory limit refused. */
const OUT_OF_MEMORY = "out of memory";

/**
 * What a caught exception becomes. An allocation past the hook's memory limit
 * must end the delivery `out_of_memory`, as in a Rust hook: the runtime names
 * that outcome for a call that traps after a refused growth, and a thrown
 * Error (unlike a string) traps the export. Anything else is the world's
 * err(message): a thrown string.
 */
function failure(where: string, e: unknown): unknown {
  if (errorText(e) === OUT_OF_MEMORY) return new Error(OUT_OF_MEMORY);
  return `${where}: ${errorText(e)}`;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === "object" && e !== null && "payload" in e) return String((e as { payload: unknown }).payload);
  return String(e);
}

// ---------------------------------------------------------------- context for the model

/** What handlers added during the delivery being handled. */
let added: string[] = [];

/**
 * Adds `text` to the model's context for the event being handled (world
 * 0.3.0's `reply.context`); the same as `ctx.addContext(text)`. Called several
 * times, the pieces are joined by a newline; empty text adds nothing. A
 * handler that throws adds nothing. The runtime keeps every hook's context in
 * registration order, at most 10,000 bytes per event from all hooks, and
 * each agent bridge forwards it where its agent takes it. The text reaches
 * the model: never put secrets in it.
 */
export function addContext(text: string): void {
  if (typeof text !== "string") {
    throw new Error(`addContext takes a string, not ${JSON.stringify(text)}`);
  }
  if (text !== "") added.push(text);
}

/** Takes what was added: the pieces joined by a newline, or none. */
function takeContext(): string | undefined {
  const text = added.length > 0 ? added.join("\n") : undefined;
  added = [];
  return text;
}

// ---------------------------------------------------------------- answers to WIT

function approval(a: Approval, index: number): WitApproval {
  if (a === "abstain" || a === "allow") return { tag: a };
  if (typeof a === "object" && a !== null) {
    if ("deny" in a && typeof a.deny === "string") return { tag: "deny", val: a.deny };
    if ("ask" in a && typeof a.ask === "string") return { tag: "ask", val: a.ask };
  }
  throw new Error(`approval #${index} is ${JSON.stringify(a)}: return "allow", "abstain", { ask: "question" } or { deny: "reason" }`);
}

/** A rewrite as JSON text: the call's whole new input, an object. */
function rewriteText(input: unknown, what: string): string {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    const is = input === null ? "null" : Array.isArray(input) ? "an array" : `a ${typeof input}`;
    throw new Error(
      `${what} is ${is}, not a JSON object: a rewrite is the call's whole new input (an object like the event's); leave it out to keep the input`,
    );
  }
  return JSON.stringify(input);
}

function callAnswer(a: CallAnswer, index: number): WitCallAnswer {
  if (typeof a !== "object" || a === null || !("approval" in a)) {
    throw new Error(
      `call answer #${index} is ${JSON.stringify(a)}: a rewrite:actions.requested handler returns { approval, rewrite? } per requested call, e.g. { approval: "allow", rewrite: { command: "ls" } }`,
    );
  }
  const out: WitCallAnswer = { approval: approval(a.approval, index) };
  if (a.rewrite !== undefined) out.rewrite = rewriteText(a.rewrite, `the rewrite of call #${index}`);
  return out;
}

function fileEdit(a: FileEditAnswer): WitFileEdit {
  if (a === "not-handled" || a === "applied") return { tag: a };
  if (typeof a === "object" && a !== null && typeof a.failed === "string") return { tag: "failed", val: a.failed };
  throw new Error(`file-edit answer is ${JSON.stringify(a)}: return "not-handled", "applied" or { failed: "message" }`);
}

function blockGate(kind: string, a: BlockAnswer): WitGate {
  if (a === "pass") return { tag: "pass" };
  if (typeof a === "object" && a !== null && typeof (a as { block?: unknown }).block === "string") {
    return { tag: "block", val: (a as { block: string }).block };
  }
  throw new Error(`gate answer is ${JSON.stringify(a)}: a ${kind} handler returns "pass" or { block: "reason" }`);
}

function stopGate(a: StopAnswer): WitGate {
  if (a === "stop") return { tag: "pass" };
  if (typeof a === "object" && a !== null && typeof (a as { continue?: unknown }).continue === "string") {
    return { tag: "continue-turn", val: (a as { continue: string }).continue };
  }
  throw new Error(`gate answer is ${JSON.stringify(a)}: a turn.stopping handler returns "stop" or { continue: "what to do next" }`);
}

function permission(a: PermissionAnswer, rewriting: boolean): WitPermission {
  const expected = rewriting
    ? `"abstain", "allow", { allow: { input } } or { deny: { message, interrupt? } }`
    : `"abstain", "allow" or { deny: { message, interrupt? } } (rewriting the input takes "rewrite:permission.requested")`;
  if (a === "abstain") return { tag: "abstain" };
  if (a === "allow") return { tag: "allow", val: undefined };
  if (typeof a === "object" && a !== null) {
    if ("deny" in a && typeof a.deny === "object" && a.deny !== null && typeof a.deny.message === "string") {
      const interrupt = a.deny.interrupt ?? false;
      if (typeof interrupt === "boolean") return { tag: "deny", val: { message: a.deny.message, interrupt } };
    }
    if ("allow" in a && typeof a.allow === "object" && a.allow !== null && "input" in a.allow && rewriting) {
      return { tag: "allow", val: rewriteText(a.allow.input, "the rewritten permission request's input") };
    }
  }
  throw new Error(`permission answer is ${JSON.stringify(a)}: a ${rewriting ? "rewrite:" : ""}permission.requested handler returns ${expected}`);
}

/** The WIT response for what the handler of subscription `key` returned. */
function response(key: string, kind: string, out: unknown): WitResponse {
  if (out === undefined || out === null || key === "*" || key.startsWith(OBSERVE_PREFIX)) return { tag: "none" };
  if (typeof (out as { then?: unknown }).then === "function") {
    throw new Error("the handler returned a Promise: handlers are synchronous (no async/await)");
  }
  const rewriting = key.startsWith(REWRITE_PREFIX);
  switch (kind) {
    case "actions.requested":
      if (rewriting) {
        if (!Array.isArray(out)) {
          throw new Error("a rewrite:actions.requested handler returns an array of { approval, rewrite? }, one per requested call");
        }
        return { tag: "calls", val: out.map(callAnswer) };
      }
      if (!Array.isArray(out)) throw new Error("an actions.requested handler returns an array of approvals, one per requested call");
      return { tag: "approvals", val: out.map(approval) };
    case "permission.requested":
      return { tag: "permission", val: permission(out as PermissionAnswer, rewriting) };
    case "file.edit.requested":
      return { tag: "file-edit", val: fileEdit(out as FileEditAnswer) };
    case "step.completed":
    case "turn.completed":
      return { tag: "edit", val: JSON.stringify(out) };
    case "turn.stopping":
      return { tag: "gate", val: stopGate(out as StopAnswer) };
    default:
      if (BLOCK_GATES.includes(kind)) return { tag: "gate", val: blockGate(kind, out as BlockAnswer) };
      return { tag: "none" }; // observe events ignore what a handler returns
  }
}

function event(e: WitEnvelope): HookEvent {
  return {
    id: e.id,
    kind: e.kind,
    timestamp: e.timestamp,
    coordinates: { ...e.coordinates, sequence: Number(e.coordinates.sequence) },
    attempt: e.attempt,
    idempotencyKey: e.idempotencyKey,
    durability: e.durability,
    data: JSON.parse(e.data) as Record<string, unknown>,
  };
}

/**
 * Defines a hook: default-export the result.
 *
 * ```ts
 * import { defineHook, log } from "hookrt";
 * export default defineHook({
 *   "message.completed"(event) { log.info("done", { id: event.data.message_id }); },
 *   "turn.stopping"(event, ctx) {
 *     if (event.data.continued) return "stop";
 *     ctx.addContext("Tests run with `make test`.");
 *     return { continue: "Run the tests before you finish." };
 *   },
 * });
 * ```
 */
export function defineHook<Config = Record<string, unknown>>(def: HookDefinition<Config>): DefinedHook {
  const table = def as Record<string, unknown>;
  const keys = Object.keys(table).filter((k) => k !== "configure" && typeof table[k] === "function");
  return {
    __hookrt: "define-hook@0.4.0",
    configure(config: string): void {
      try {
        def.configure?.(JSON.parse(config) as Config);
      } catch (e) {
        throw failure("configure", e);
      } finally {
        added = []; // context belongs to deliveries
      }
    },
    subscriptions(): string[] {
      return keys;
    },
    handle(envelope: WitEnvelope, context: WitContext): WitReply {
      const handler = table[context.handler] as ((e: HookEvent, c: Context) => unknown) | undefined;
      if (handler === undefined) throw `no handler for \`${context.handler}\``;
      added = [];
      try {
        const cx: Context = { ...context, budgetMs: Number(context.budgetMs), addContext };
        const out = handler.call(def, event(envelope), cx);
        const answer = response(context.handler, envelope.kind, out);
        const text = takeContext();
        return text === undefined ? { response: answer } : { response: answer, context: text };
      } catch (e) {
        added = []; // a failed delivery adds nothing
        // A thrown Error would trap without a word; the world's err(message) keeps it.
        throw failure(context.handler, e);
      }
    },
  };
}

// `console.*` has no stdout here (componentize-js runs without WASI stdio):
// send it to the host log instead of dropping it.
const show = (args: unknown[]) =>
  args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(" ");
globalThis.console = {
  log: (...a: unknown[]) => emit("info", show(a)),
  info: (...a: unknown[]) => emit("info", show(a)),
  debug: (...a: unknown[]) => emit("debug", show(a)),
  warn: (...a: unknown[]) => emit("warn", show(a)),
  error: (...a: unknown[]) => emit("error", show(a)),
};
