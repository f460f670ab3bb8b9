/**
 * World 0.4.0's grants, typed: `exec`, `read`, `transcript`, `secret`, `notify`
 * and `write`. Each is an object of functions over one host interface; a hook
 * that does not use one does not import it (the bundle keeps only the host
 * imports it uses), so it needs no grant for it. Each needs its grant in
 * `hookrt.toml` (docs/configuration.md); a refusal or failure throws a
 * {@link GrantError} naming the grant, the WIT error's case and its detail.
 *
 * ```ts
 * import { defineHook, exec, GrantError } from "hookrt";
 * export default defineHook({
 *   "action.result"(event) {
 *     const file = (event.data.output as { filePath?: string } | undefined)?.filePath;
 *     if (file === undefined) return;
 *     const ran = exec.run("fmt", { file });
 *     if (!ran.ok) throw new Error(`fmt failed: ${ran.stderrText}`);
 *   },
 * });
 * ```
 */

import * as hostExec from "hookrt:hook/exec@0.4.0";
import * as hostNotify from "hookrt:hook/notify@0.4.0";
import * as hostRead from "hookrt:hook/read@0.4.0";
import * as hostSecret from "hookrt:hook/secret@0.4.0";
import * as hostTranscript from "hookrt:hook/transcript@0.4.0";
import * as hostWrite from "hookrt:hook/write@0.4.0";

// ---------------------------------------------------------------- errors

/** Why `exec.run` did not run the program (the WIT's `exec-error`). */
export type ExecErrorKind = "not-allowed" | "bad-argument" | "busy" | "failed";
/** Why a `read` was refused or failed (`read-error`). */
export type ReadErrorKind = "denied" | "not-found" | "too-large" | "failed";
/** Why the transcript cannot be read (`transcript-error`). */
export type TranscriptErrorKind = "none" | "denied" | "failed";
/** Why a `secret.send` was not sent or failed (`secret-error`). */
export type SecretErrorKind = "unknown" | "origin-refused" | "unavailable" | "failed";
/** Why a notification was not shown (`notify-error`). */
export type NotifyErrorKind = "rate-limited" | "unavailable";
/** Why a `write` was refused or failed (`write-error`). */
export type WriteErrorKind = "denied" | "too-large" | "failed";

/**
 * A grant's call refused or failed. `grant` names the grant (`"exec"`),
 * `kind` the WIT error's case (`"not-allowed"`), `detail` the host's text and
 * `size` the byte count of a `too-large`. Uncaught, it fails the delivery with
 * its message, e.g. `exec "fmt": not allowed: the table names no such program`.
 */
export class GrantError<Kind extends string = string> extends Error {
  readonly grant: string;
  readonly kind: Kind;
  readonly detail?: string;
  readonly size?: number;

  constructor(grant: string, subject: string, kind: Kind, detail?: string, size?: number) {
    const said = detail ?? (size === undefined ? undefined : `${size} bytes`);
    super(`${grant}${subject ? ` ${subject}` : ""}: ${kind.replace(/-/g, " ")}${said ? `: ${said}` : ""}`);
    this.name = "GrantError";
    this.grant = grant;
    this.kind = kind;
    this.detail = detail;
    this.size = size;
  }
}

/**
 * Runs `f`, turning the host's err (a thrown `{ payload: { tag, val } }`) into
 * a GrantError. Anything else (an allocation past the memory limit) is thrown
 * as it is, so the delivery ends as it would in any other code.
 */
function call<T, Kind extends string>(grant: string, subject: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    const payload = typeof e === "object" && e !== null ? (e as { payload?: unknown }).payload : undefined;
    if (typeof payload !== "object" || payload === null || !("tag" in payload)) throw e;
    const { tag, val } = payload as { tag: Kind; val?: unknown };
    if (typeof val === "bigint" || typeof val === "number") throw new GrantError(grant, subject, tag, undefined, Number(val));
    throw new GrantError(grant, subject, tag, typeof val === "string" ? val : undefined);
  }
}

const quoted = (s: string) => JSON.stringify(s);
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const bytes = (data: Uint8Array | string) => (typeof data === "string" ? encode(data) : data);

// ---------------------------------------------------------------- exec

/** What one `exec.run` gave back. */
export interface ExecOutput {
  /** The exit code; undefined when the program was killed (time limit, signal). */
  status?: number;
  /** Whether the time limit killed it. */
  timedOut: boolean;
  /** Its stdout, at most the table's `output_bytes`. */
  stdout: Uint8Array;
  /** Its stderr, at most the table's `output_bytes`. */
  stderr: Uint8Array;
  /** Whether stdout or stderr was cut at the cap. */
  truncated: boolean;
  /** Wall time of the run, in milliseconds. */
  durationMs: number;
  /** Whether it exited with status 0. */
  ok: boolean;
  /** `stdout` as UTF-8 text. */
  stdoutText: string;
  /** `stderr` as UTF-8 text. */
  stderrText: string;
}

/**
 * Runs a program the hook's `exec` table allows. Needs the `exec` grant and
 * its table, pinned by `hookrt.lock`. No shell, ever: the hook names a program
 * of the table and fills its template's placeholders.
 */
export const exec = {
  /**
   * Runs `program` (a name in the table) with `args` filling its template's
   * placeholders (`{ file: "src/a.ts" }`).
   * @throws GrantError<ExecErrorKind> when it did not run.
   */
  run(program: string, args: Record<string, string> = {}): ExecOutput {
    const pairs = Object.entries(args).map(([key, value]): [string, string] => {
      if (typeof value !== "string") {
        throw new Error(`exec.run(${quoted(program)}): placeholder \`${key}\` is ${JSON.stringify(value)}, not a string`);
      }
      return [key, value];
    });
    const o = call<hostExec.Output, ExecErrorKind>("exec", quoted(program), () => hostExec.run(program, pairs));
    return {
      status: o.status ?? undefined,
      timedOut: o.timedOut,
      stdout: o.stdout,
      stderr: o.stderr,
      truncated: o.truncated,
      durationMs: Number(o.durationMs),
      ok: o.status === 0,
      stdoutText: decode(o.stdout),
      stderrText: decode(o.stderr),
    };
  },
};

// ---------------------------------------------------------------- read

/**
 * The project folder, read-only. Needs the `read` grant. Paths are relative to
 * the project (the host decides which folder that is); deny patterns (`.env*`,
 * keys, `.git/config`, the agent's settings) and size caps refuse a read.
 */
export const read = {
  /**
   * The whole content of the file at `path`.
   * @throws GrantError<ReadErrorKind>
   */
  readFile(path: string): Uint8Array {
    return call<Uint8Array, ReadErrorKind>("read", quoted(path), () => hostRead.readFile(path));
  },
  /**
   * The file at `path` as UTF-8 text.
   * @throws GrantError<ReadErrorKind>
   */
  readText(path: string): string {
    return decode(read.readFile(path));
  },
  /**
   * The names in the folder at `path` (`"."`, the project's root, by
   * default), sorted; denied names are left out.
   * @throws GrantError<ReadErrorKind>
   */
  listDir(path = "."): string[] {
    return call<string[], ReadErrorKind>("read", quoted(path), () => hostRead.listDir(path));
  },
};

// ---------------------------------------------------------------- transcript

/**
 * The session's transcript, read-only. Needs the `transcript` grant: only the
 * file the agent named for this event, only where that agent keeps them.
 */
export const transcript = {
  /**
   * The last `maxBytes` bytes of the transcript (whole lines), at most the
   * grant's cap.
   * @throws GrantError<TranscriptErrorKind> (`"none"`: the event names no transcript)
   */
  tail(maxBytes: number): Uint8Array {
    const n = BigInt(Math.max(0, Math.trunc(maxBytes)));
    return call<Uint8Array, TranscriptErrorKind>("transcript", "", () => hostTranscript.tail(n));
  },
  /**
   * The last lines of the transcript (at most `maxBytes` of them), as text,
   * one string per line.
   * @throws GrantError<TranscriptErrorKind>
   */
  tailLines(maxBytes: number): string[] {
    return decode(transcript.tail(maxBytes))
      .split("\n")
      .filter((l) => l !== "");
  },
};

// ---------------------------------------------------------------- secret

/** One request `secret.send` sends, with the secret put where its table says. */
export interface SecretRequest {
  /** `GET`, `POST`, `PUT`, `PATCH` or `DELETE`; `POST` when a body is given, else `GET`. */
  method?: string;
  /** The whole URL; its origin must be one the secret is bound to. */
  url: string;
  /** Headers; none may name the secret's own header. */
  headers?: Record<string, string>;
  /** The body: bytes, or text sent as UTF-8. */
  body?: Uint8Array | string;
}

/** What came back. */
export interface SecretResponse {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  /** `body` as UTF-8 text. */
  text: string;
}

/**
 * A request carrying a host secret the hook never sees. Needs the `secret`
 * grant, whose table names the secret, its origins and where it goes.
 */
export const secret = {
  /**
   * Sends `request` with the secret `name` injected.
   * @throws GrantError<SecretErrorKind>
   */
  send(name: string, request: SecretRequest): SecretResponse {
    const req: hostSecret.Request = {
      method: request.method ?? (request.body === undefined ? "GET" : "POST"),
      url: request.url,
      headers: Object.entries(request.headers ?? {}),
      body: bytes(request.body ?? new Uint8Array()),
    };
    const r = call<hostSecret.Response, SecretErrorKind>("secret", quoted(name), () => hostSecret.send(name, req));
    return { status: r.status, headers: r.headers, body: r.body, text: decode(r.body) };
  },
};

// ---------------------------------------------------------------- notify

/** How urgent a notification is. */
export type Urgency = "low" | "normal" | "critical";

/** A desktop notification. Needs the `notify` grant; rate-limited per hook. */
export const notify = {
  /**
   * Shows a notification (title and body bounded by the host).
   * @throws GrantError<NotifyErrorKind>
   */
  send(title: string, body: string, urgency: Urgency = "normal"): void {
    call<void, NotifyErrorKind>("notify", "", () => hostNotify.send(title, body, urgency));
  },
};

// ---------------------------------------------------------------- write

/**
 * Writing one declared place. Needs the `write` grant, whose table names one
 * file (appended to) or one folder (files written inside it), with a size cap.
 */
export const write = {
  /**
   * Appends `data` (bytes, or text as UTF-8) to the declared file.
   * @throws GrantError<WriteErrorKind>
   */
  append(data: Uint8Array | string): void {
    call<void, WriteErrorKind>("write", "", () => hostWrite.append(bytes(data)));
  },
  /**
   * Writes `data` as the whole file at `path`, relative to the declared folder.
   * @throws GrantError<WriteErrorKind>
   */
  writeFile(path: string, data: Uint8Array | string): void {
    call<void, WriteErrorKind>("write", quoted(path), () => hostWrite.writeFile(path, bytes(data)));
  },
};
