// hookrt's plugin for OpenCode and Kilo CLI, written by `hookrt install
// --agent opencode` (or `kilo`): it hands each hook to hookrt and applies
// the answer. It decides nothing itself. A deny is thrown (the tool does
// not run, the model reads the reason; a prompt is not sent), a rewrite is
// written into the call's args, context is added to a prompt's parts or a
// tool's output. When hookrt cannot answer a gate in time, or answers
// something that is not an answer, the gate is refused: it fails closed.
// Only `import type` from packages (a plugin whose value import fails is
// skipped without a word) and `node:` built-ins.
// docs/agents.md, "OpenCode and Kilo CLI"; docs/adr/0008-opencode-plugin.md.

import type { Plugin } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"

/** What `hookrt install` writes on the `SETTINGS` line. */
interface Settings {
  /** The command run per hook, as argv (`hookrt hook --agent opencode DIR …`). */
  command: string[]
  /** `hookrt serve`'s route of this agent; when set, hooks go there instead. */
  url: string | null
  /** The environment variable holding `hookrt serve`'s bearer token. */
  tokenEnv: string
  /** The time a gate's hooks get over HTTP (`?budget_ms=`). */
  budgetMs: number
  /** The hooks hookrt is the hook of. */
  events: string[]
  /** The hooks that gate: hookrt failing on one refuses it. */
  gates: string[]
  /** How long the plugin waits for hookrt's answer. */
  timeoutMs: number
}

const SETTINGS: Settings = {"command":[],"url":null,"tokenEnv":"HOOKRT_TOKEN","budgetMs":8000,"events":[],"gates":[],"timeoutMs":15000}

/** hookrt's answer (`front/bridge/opencode.rs`, `opencode_answer`);
 * exported for the tests' type check only (a type is no value OpenCode
 * would take for a plugin). */
export interface Answer {
  decision?: "allow" | "deny" | "ask"
  reason?: string
  args?: Record<string, unknown>
  context?: string
}

/** `input` given to the command hook; its stdout. */
function run(input: string): Promise<string> {
  const [program, ...args] = SETTINGS.command
  if (program === undefined) {
    return Promise.reject(new Error("no hookrt command in this plugin: run `hookrt install` again"))
  }
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${program} gave no answer within ${SETTINGS.timeoutMs} ms`))
    }, SETTINGS.timeoutMs)
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => err.push(b))
    child.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      const said = Buffer.concat(err).toString("utf8").trim().slice(0, 2000)
      if (code === 0) resolve(Buffer.concat(out).toString("utf8"))
      else reject(new Error(`${program} exited with ${code ?? signal}${said ? `: ${said}` : ""}`))
    })
    // A hookrt that exits before reading all of it: its exit says why.
    child.stdin.on("error", () => {})
    child.stdin.end(input)
  })
}

/** `input` posted to `hookrt serve`; its answer's body. */
async function post(input: string, gate: boolean): Promise<string> {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const token = process.env[SETTINGS.tokenEnv]
  if (token) headers.authorization = `Bearer ${token}`
  const url = gate ? `${SETTINGS.url}?budget_ms=${SETTINGS.budgetMs}` : `${SETTINGS.url}`
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: input,
    signal: AbortSignal.timeout(SETTINGS.timeoutMs),
  })
  const body = await res.text()
  if (!res.ok) throw new Error(`hookrt serve answered ${res.status}: ${body.slice(0, 2000)}`)
  return body
}

/** `text` read as an answer, or why it is not one. */
function answerOf(text: string): Answer {
  if (text.trim() === "") return {}
  const a: unknown = JSON.parse(text)
  if (typeof a !== "object" || a === null || Array.isArray(a)) throw new Error(`not an answer: ${text.slice(0, 200)}`)
  const { decision, reason, args, context } = a as Record<string, unknown>
  if (decision !== undefined && decision !== "allow" && decision !== "deny" && decision !== "ask")
    throw new Error(`not a decision: ${JSON.stringify(decision)}`)
  if (reason !== undefined && typeof reason !== "string") throw new Error("a reason that is not text")
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args)))
    throw new Error("rewritten args that are not an object")
  if (context !== undefined && typeof context !== "string") throw new Error("context that is not text")
  return a as Answer
}

export const Hookrt: Plugin = async (ctx) => {
  /** hookrt's answer to `hook`: `{}` when it has nothing to say (or is
   * not the hook of it); a deny when it fails on a gate. */
  async function ask(hook: string, fields: Record<string, unknown>): Promise<Answer> {
    if (!SETTINGS.events.includes(hook)) return {}
    const gate = SETTINGS.gates.includes(hook)
    try {
      const input = JSON.stringify({ hook, cwd: ctx.directory, ...fields })
      return answerOf(SETTINGS.url === null ? await run(input) : await post(input, gate))
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e)
      if (gate) return { decision: "deny", reason: `hookrt could not decide ${hook}, so it is refused: ${why}` }
      console.error(`hookrt: ${hook}: ${why}`)
      return {}
    }
  }

  return {
    "tool.execute.before": async (input, output) => {
      const args: unknown = output.args
      const a = await ask("tool.execute.before", {
        sessionID: input.sessionID,
        callID: input.callID,
        tool: input.tool,
        args,
      })
      if (a.decision === "deny") throw new Error(a.reason ?? "denied by hookrt")
      if (a.args === undefined) return
      // OpenCode runs what its `args` object holds afterwards: the
      // rewrite goes into that object (a new one would be ignored).
      if (typeof args !== "object" || args === null) throw new Error("hookrt rewrote args OpenCode gave as no object")
      const held = args as Record<string, unknown>
      for (const key of Object.keys(held)) if (!(key in a.args)) delete held[key]
      Object.assign(held, a.args)
    },
    "permission.ask": async (input, output) => {
      const a = await ask("permission.ask", {
        sessionID: input.sessionID,
        callID: input.callID,
        id: input.id,
        type: input.type,
        pattern: input.pattern,
        title: input.title,
        metadata: input.metadata,
      })
      if (a.decision !== undefined) output.status = a.decision
    },
    "chat.message": async (input, output) => {
      const prompt = output.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
      const a = await ask("chat.message", {
        sessionID: input.sessionID,
        messageID: output.message.id,
        agent: output.message.agent,
        model: output.message.model,
        prompt,
      })
      if (a.decision === "deny") {
        console.error(`hookrt: prompt blocked: ${a.reason ?? ""}`)
        throw new Error(a.reason ?? "prompt blocked by hookrt")
      }
      if (a.context !== undefined) {
        output.parts.push({
          id: `prt_hookrt${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`,
          sessionID: output.message.sessionID,
          messageID: output.message.id,
          type: "text",
          text: a.context,
          synthetic: true,
        })
      }
    },
    "tool.execute.after": async (input, output) => {
      const metadata: unknown = output.metadata
      const exit = typeof metadata === "object" && metadata !== null ? (metadata as { exit?: unknown }).exit : undefined
      const a = await ask("tool.execute.after", {
        sessionID: input.sessionID,
        callID: input.callID,
        tool: input.tool,
        args: input.args,
        title: output.title,
        output: output.output,
        exit,
      })
      if (a.context !== undefined) output.output = `${output.output}\n\n${a.context}`
    },
    "experimental.session.compacting": async (input) => {
      await ask("experimental.session.compacting", { sessionID: input.sessionID })
    },
    event: async ({ event }) => {
      if (event.type === "session.created") await ask("session.created", { sessionID: event.properties.info.id })
      if (event.type === "session.idle") await ask("session.idle", { sessionID: event.properties.sessionID })
    },
  }
}
