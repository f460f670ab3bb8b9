// The host imports of the define-hook world (wit/v0.4.0/hook.wit) as
// componentize-js binds them. Only src/hookrt.ts imports these; a hook
// imports "hookrt".

declare module "hookrt:hook/log@0.4.0" {
  export function log(
    level: "trace" | "debug" | "info" | "warn" | "error",
    message: string,
    fields: { key: string; value: string }[],
  ): void;
}

declare module "hookrt:hook/metrics@0.4.0" {
  export function counter(name: string, delta: bigint, labels: [string, string][]): void;
  export function gauge(name: string, value: number, labels: [string, string][]): void;
}

declare module "hookrt:hook/state@0.4.0" {
  export function get(key: string): Uint8Array | undefined;
  /** Throws the host's message when a size cap would be exceeded. */
  export function set(key: string, value: Uint8Array): void;
  function del(key: string): void;
  export { del as delete };
}

// World 0.4.0's grants. A `result<T, E>` returns T or throws an error whose
// `payload` is E (a variant as `{ tag, val }`); `u64` is a bigint.

declare module "hookrt:hook/exec@0.4.0" {
  export interface Output {
    status?: number;
    timedOut: boolean;
    stdout: Uint8Array;
    stderr: Uint8Array;
    truncated: boolean;
    durationMs: bigint;
  }
  export function run(program: string, args: [string, string][]): Output;
}

declare module "hookrt:hook/read@0.4.0" {
  export function readFile(path: string): Uint8Array;
  export function listDir(path: string): string[];
}

declare module "hookrt:hook/transcript@0.4.0" {
  export function tail(maxBytes: bigint): Uint8Array;
}

declare module "hookrt:hook/secret@0.4.0" {
  export interface Request {
    method: string;
    url: string;
    headers: [string, string][];
    body: Uint8Array;
  }
  export interface Response {
    status: number;
    headers: [string, string][];
    body: Uint8Array;
  }
  export function send(name: string, request: Request): Response;
}

declare module "hookrt:hook/notify@0.4.0" {
  export function send(title: string, body: string, urgency: "low" | "normal" | "critical"): void;
}

declare module "hookrt:hook/write@0.4.0" {
  export function append(bytes: Uint8Array): void;
  export function writeFile(path: string, bytes: Uint8Array): void;
}

// Globals of componentize-js's engine (StarlingMonkey) that hooks may use.
// Others it has (fetch, timers, crypto) are refused or inert here: the
// component is built without wasi:http, clocks, random or stdio.

declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string);
  decode(input?: Uint8Array): string;
}
declare var console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};
declare function atob(data: string): string;
declare function btoa(data: string): string;
declare function structuredClone<T>(value: T): T;
