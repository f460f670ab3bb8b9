#!/usr/bin/env node
// Runs command hooks through Gemini CLI's OWN hook machinery, as the pinned
// `@google/gemini-cli-core` (0.61.0) runs them for the `gemini` binary:
// HookSystem -> HookRegistry (hooks from a settings-shaped object) ->
// HookPlanner (matchers, dedup) -> HookRunner (spawns `bash -c <command>` in
// the input's cwd, writes the input JSON on stdin, parses stdout/stderr and
// the exit code) -> HookAggregator (folds several hooks' outputs), reached
// through HookEventHandler.executeHooks, the method every fire*Event calls.
// Nothing of Gemini's is re-implemented here: the script only builds the
// input, a minimal Config stub, and prints what Gemini's classes return.
//
// Usage:
//   node gemini-run-hook.mjs <EventName> <command|-> <input.json> [options]
//
//   <EventName>   one of Gemini's HookEventName values (BeforeTool, AfterTool,
//                 BeforeAgent, AfterAgent, SessionStart, ...)
//   <command>     the command hook to run (a shell command line); `-` with
//                 --settings
//   <input.json>  the event's input; merged over the base fields Gemini adds
//                 to every event (session_id, transcript_path, cwd,
//                 hook_event_name, timestamp), so it may hold only the
//                 event's own fields. Its `cwd` is where the hook runs.
//
// Options:
//   --core <dir>       the @google/gemini-cli-core package folder (or set
//                      GEMINI_CORE_DIR); required
//   --matcher <m>      the definition's matcher (default none: match all)
//   --timeout <ms>     the hook's timeout in milliseconds (Gemini's default:
//                      60000)
//   --name <n>         the (first) hook's name
//   --sequential       mark the definition `sequential: true`
//   --also <command>   another command hook in the same definition
//                      (repeatable)
//   --settings <file>  take the hooks from a settings.json-shaped file (its
//                      `hooks` object) instead of <command>
//   --untrusted        an untrusted folder (Gemini loads no hooks then)
//
// Env: GEMINI_HOOK_QUIET=1 drops Gemini's debug logging (otherwise on
// stderr).
//
// Output: ONE JSON object on stdout:
//   event, input         the event and the input the hooks got
//   plan                 {hooks, sequential}, or null when nothing matched
//   raw                  each hook's HookExecutionResult: {hook, success,
//                        exitCode, outputFormat, output, stdout, stderr,
//                        error, duration}
//   aggregated           {success, finalOutput, finalOutputClass, errors,
//                        allOutputs}: what the aggregator folded
//   blocking, stop, ask  finalOutput.isBlockingDecision(),
//                        shouldStopExecution(), isAskDecision()
//   reason, systemMessage, suppressOutput, additionalContext, clearContext,
//   tailToolCallRequest  the folded output as Gemini's accessors read it
//   modifiedToolInput    (BeforeTool) the arguments Gemini would replace the
//                        call's with
//   llmRequestModified, syntheticResponse (BeforeModel), modifiedResponse
//   (AfterModel), toolConfig (BeforeToolSelection)
//   effect               in words, what the 0.61.0 call site does with it
// Exit: 0 with the JSON; 64 for bad arguments.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// gemini-cli-core's debugLogger writes with console.log/debug (stdout): send
// those to stderr (or drop them) so stdout holds only the JSON.
{
  const quiet = process.env.GEMINI_HOOK_QUIET === '1';
  const toErr = (...a) => {
    if (!quiet) process.stderr.write(a.map(String).join(' ') + '\n');
  };
  console.log = console.debug = console.info = toErr;
  if (quiet) console.warn = () => {};
}

function usage(why) {
  process.stderr.write(
    `gemini-run-hook: ${why}\n` +
      'usage: gemini-run-hook.mjs <EventName> <command|-> <input.json> [--core DIR] [--matcher M] [--timeout MS] [--name N] [--sequential] [--also CMD]... [--settings FILE] [--untrusted]\n',
  );
  process.exit(64);
}

// ---- arguments ----
const argv = process.argv.slice(2);
const pos = [];
const opt = { also: [] };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  if (a === '--core') opt.core = value();
  else if (a === '--matcher') opt.matcher = value();
  else if (a === '--timeout') opt.timeout = Number(value());
  else if (a === '--name') opt.name = value();
  else if (a === '--sequential') opt.sequential = true;
  else if (a === '--also') opt.also.push(value());
  else if (a === '--settings') opt.settings = value();
  else if (a === '--untrusted') opt.untrusted = true;
  else pos.push(a);
}
const [eventName, command, inputFile] = pos;
if (!eventName || !command || !inputFile) usage('missing arguments');
const CORE = opt.core || process.env.GEMINI_CORE_DIR;
if (!CORE) usage('give --core DIR or set GEMINI_CORE_DIR (the @google/gemini-cli-core package)');
if (!fs.existsSync(path.join(CORE, 'dist/src/hooks/hookSystem.js'))) {
  usage(`${CORE} is not the @google/gemini-cli-core package (no dist/src/hooks/hookSystem.js)`);
}

const imp = (p) => import(pathToFileURL(path.join(CORE, 'dist/src', p)).href);
const { HookSystem } = await imp('hooks/hookSystem.js');
const T = await imp('hooks/types.js');
const { defaultHookTranslator } = await imp('hooks/hookTranslator.js');

if (!Object.values(T.HookEventName).includes(eventName)) {
  usage(`unknown event ${eventName}; Gemini's: ${Object.values(T.HookEventName).join(', ')}`);
}

// ---- the input ----
const fileInput = JSON.parse(fs.readFileSync(inputFile, 'utf8'));
// The base fields as HookEventHandler.createBaseInput() builds them
// (hooks/hookEventHandler.js); the file's values win.
const input = {
  session_id: 'gemini-run-hook-session',
  transcript_path: '',
  cwd: process.cwd(),
  hook_event_name: eventName,
  timestamp: new Date().toISOString(),
  ...fileInput,
};

// ---- the hooks (settings.json's `hooks` shape) ----
let hooksConfig;
if (opt.settings) {
  const s = JSON.parse(fs.readFileSync(opt.settings, 'utf8'));
  hooksConfig = s.hooks ?? s;
} else {
  const mk = (cmd, idx) => ({
    type: 'command',
    command: cmd,
    ...(opt.name && idx === 0 ? { name: opt.name } : {}),
    ...(opt.timeout !== undefined ? { timeout: opt.timeout } : {}),
  });
  hooksConfig = {
    [eventName]: [
      {
        ...(opt.matcher !== undefined ? { matcher: opt.matcher } : {}),
        ...(opt.sequential ? { sequential: true } : {}),
        hooks: [command, ...opt.also].map(mk),
      },
    ],
  };
}

// ---- a minimal Config: only what the hook classes touch ----
// HookRegistry:     getHooks, getProjectHooks, isTrustedFolder,
//                   getProjectRoot, getExtensions, getDisabledHooks
// HookRunner:       isTrustedFolder, sanitizationConfig, storage.getPlansDir
// HookEventHandler: config (itself), geminiClient, getSessionId,
//                   getWorkingDir
// telemetry:        getUsageStatisticsEnabled -> false (no Clearcut; OTel
//                   events are only buffered, never sent)
const cwd = input.cwd;
const stub = {
  getHooks: () => hooksConfig,
  // No project hooks: the settings hooks are never written to
  // ~/.gemini/trusted_hooks.json.
  getProjectHooks: () => undefined,
  isTrustedFolder: () => !opt.untrusted,
  getProjectRoot: () => cwd,
  getExtensions: () => [],
  getDisabledHooks: () => [],
  sanitizationConfig: {
    allowedEnvironmentVariables: [],
    blockedEnvironmentVariables: [],
    enableEnvironmentVariableRedaction: false,
  },
  storage: { getPlansDir: () => path.join(cwd, '.gemini', 'plans') },
  geminiClient: undefined,
  getSessionId: () => input.session_id,
  getWorkingDir: () => cwd,
  getUsageStatisticsEnabled: () => false,
  getTelemetryLogPromptsEnabled: () => false,
};
stub.config = stub;

const hs = new HookSystem(stub);
await hs.initialize();

// The matcher's context as the fire*Event methods build it; the other
// events pass none (their matchers are ignored).
let context;
switch (eventName) {
  case 'BeforeTool':
  case 'AfterTool':
    context = { toolName: input.tool_name };
    break;
  case 'SessionStart':
    context = { trigger: input.source };
    break;
  case 'SessionEnd':
    context = { trigger: input.reason };
    break;
  case 'PreCompress':
    context = { trigger: input.trigger };
    break;
  default:
    context = undefined;
}

// Each hook's own result: the runner's methods are wrapped to keep what
// they hand the aggregator.
let raw = [];
const runner = hs.hookRunner;
for (const m of ['executeHooksParallel', 'executeHooksSequential']) {
  const orig = runner[m].bind(runner);
  runner[m] = async (...args) => {
    raw = await orig(...args);
    return raw;
  };
}
const plan = hs.hookPlanner.createExecutionPlan(eventName, context);
const agg = await hs.getEventHandler().executeHooks(eventName, input, context);
const fo = agg.finalOutput;

const ser = (r) => ({
  hook: r.hookConfig?.name || r.hookConfig?.command,
  success: r.success,
  exitCode: r.exitCode,
  outputFormat: r.outputFormat,
  output: r.output,
  stdout: r.stdout,
  stderr: r.stderr,
  error: r.error ? String(r.error.message ?? r.error) : undefined,
  duration: r.duration,
});

const out = {
  event: eventName,
  input,
  plan: plan ? { hooks: plan.hookConfigs.length, sequential: plan.sequential } : null,
  raw: raw.map(ser),
  aggregated: {
    success: agg.success,
    finalOutput: fo ? { ...fo } : null,
    finalOutputClass: fo?.constructor?.name,
    errors: agg.errors.map((e) => String(e.message ?? e)),
    allOutputs: agg.allOutputs,
  },
  blocking: fo ? fo.isBlockingDecision() : false,
  stop: fo ? fo.shouldStopExecution() : false,
  ask: fo ? fo.isAskDecision() : false,
  reason: fo ? fo.getEffectiveReason() : undefined,
  systemMessage: fo?.systemMessage,
  suppressOutput: fo?.suppressOutput,
  additionalContext: fo?.getAdditionalContext(),
  clearContext: fo?.shouldClearContext(),
  tailToolCallRequest: fo?.getTailToolCallRequest(),
};

if (fo instanceof T.BeforeToolHookOutput) {
  out.modifiedToolInput = fo.getModifiedToolInput();
}
if (fo instanceof T.BeforeModelHookOutput && input.llm_request) {
  const target = defaultHookTranslator.fromHookLLMRequest(input.llm_request);
  const mod = fo.applyLLMRequestModifications(target);
  out.llmRequestModified = defaultHookTranslator.toHookLLMRequest(mod);
  out.syntheticResponse = fo.getSyntheticResponse();
}
if (fo instanceof T.AfterModelHookOutput) {
  out.modifiedResponse = fo.getModifiedResponse();
}
if (fo instanceof T.BeforeToolSelectionHookOutput) {
  out.toolConfig = fo.applyToolConfigModifications({}).toolConfig;
}

// What the 0.61.0 call sites do with the folded output.
function effect() {
  if (!fo) return 'no output: proceed unchanged';
  switch (eventName) {
    case 'BeforeTool': // scheduler/hook-utils.js, scheduler/scheduler.js
      if (fo.shouldStopExecution())
        return `tool error STOP_EXECUTION: "Agent execution stopped by hook: ${fo.getEffectiveReason()}"`;
      if (fo.isBlockingDecision())
        return `tool error POLICY_VIOLATION: "Tool execution blocked: ${fo.getEffectiveReason()}"`;
      return [
        fo.isAskDecision() ? 'force user confirmation (ASK_USER)' : 'policy check as usual',
        out.modifiedToolInput
          ? `args REPLACED by ${JSON.stringify(out.modifiedToolInput)} (re-validated via tool.build)`
          : 'args unchanged',
      ].join('; ');
    case 'AfterTool': // core/coreToolHookTriggers.js
      if (fo.shouldStopExecution())
        return `tool result replaced: "Agent execution stopped by hook: ${fo.getEffectiveReason()}"`;
      if (fo.isBlockingDecision())
        return `tool result replaced: "Tool result blocked: ${fo.getEffectiveReason()}"`;
      return out.additionalContext
        ? `append "\\n\\n<hook_context>${out.additionalContext}</hook_context>" to tool result`
        : 'tool result unchanged';
    case 'BeforeAgent': // core/client.js
      if (fo.shouldStopExecution()) return `AgentExecutionStopped: ${fo.getEffectiveReason()}`;
      if (fo.isBlockingDecision()) return `AgentExecutionBlocked: ${fo.getEffectiveReason()}`;
      return out.additionalContext
        ? `append part "<hook_context>${out.additionalContext}</hook_context>" to prompt`
        : 'prompt unchanged';
    case 'AfterAgent': // core/client.js
      if (fo.shouldStopExecution()) return `AgentExecutionStopped (clearContext=${out.clearContext})`;
      if (fo.isBlockingDecision())
        return `AgentExecutionBlocked, then re-prompt model with "${fo.getEffectiveReason()}" (stop_hook_active=true), clearContext=${out.clearContext}`;
      return 'turn ends normally';
    default:
      return 'see aggregated';
  }
}
out.effect = effect();

process.stdout.write(JSON.stringify(out, null, 2) + '\n', () => process.exit(0));
