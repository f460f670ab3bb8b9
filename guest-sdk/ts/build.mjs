// Builds one TypeScript/JavaScript hook into a component for the define-hook
// world. hookrt runs it (`node build.mjs`, hooks/typescript.rs) with a JSON
// request on stdin:
//   { toolchain, sdk, wit, path, lang, source, out }
// `source` is the hook file's text, read by hookrt: this script never opens
// the agent folder, so nothing there (node_modules, package.json, tsconfig,
// npm scripts, plugins) is read or run. Steps, all with the pinned toolchain:
//   1. type-check (.ts only) with TypeScript's compiler API, against the SDK
//      and ES2022 only (an in-memory host: no file outside the SDK and the
//      compiler's own lib files is read);
//   2. bundle with esbuild: the hook and "hookrt" (the SDK, src/index.ts and
//      the SDK's own modules beside it), nothing else; any other import is
//      refused, naming file, line and the import;
//   3. componentize-js (StarlingMonkey + Wizer) against the world with only
//      the host imports the bundle uses, every WASI feature disabled.
// Success: one JSON line on stdout { imports, bundle_bytes, ms }. Failure:
// the message on stderr, exit status 1.

import { createRequire } from "node:module";
import { mkdtemp, readFile, writeFile, mkdir, rm } from "node:fs/promises";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";

// The world's host imports; the build keeps those the bundle uses.
const WORLD_IMPORTS = ["log", "metrics", "state", "exec", "read", "transcript", "secret", "notify", "write"];
const SDK_MODULE = "hookrt";
const HOST_PREFIX = "hookrt:hook/";
const FIX =
  'a hook may import only "hookrt" (the SDK); put the code in the hook file, or build the hook into a component yourself and drop the .wasm into hooks/';

async function main() {
  const req = JSON.parse(await readStdin());
  const require = createRequire(join(req.toolchain, "package.json"));
  const t0 = Date.now();
  const sdkFile = join(req.sdk, "src", "index.ts");
  // Imports first: a refused import is the clearest error the author can get.
  const { code, hostImports } = await bundle(require("esbuild"), req, sdkFile);
  if (req.lang === "ts") typeCheck(require("typescript"), req, sdkFile);
  const witDir = await filteredWit(req.wit, hostImports);
  const cjsDir = join(req.toolchain, "node_modules", "@bytecodealliance", "componentize-js");
  const pkg = JSON.parse(await readFile(join(cjsDir, "package.json"), "utf8"));
  const { componentize } = await import(pathToFileURL(join(cjsDir, pkg.exports.import)).href);
  const { component } = await componentize(code, {
    sourceName: "hook.js",
    witPath: witDir,
    worldName: "define-hook",
    // A "pure" component: no wasi:cli, wasi:io, wasi:random, wasi:clocks or
    // wasi:http import, so the hook needs no grant beyond what it uses.
    disableFeatures: ["stdio", "random", "clocks", "http", "fetch-event"],
  });
  await writeFile(req.out, component);
  await rm(witDir, { recursive: true, force: true });
  process.stdout.write(
    JSON.stringify({ imports: hostImports, bundle_bytes: Buffer.byteLength(code), ms: Date.now() - t0 }) + "\n",
  );
}

function readStdin() {
  return new Promise((resolve, reject) => {
    let text = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (c) => (text += c));
    process.stdin.on("end", () => resolve(text));
    process.stdin.on("error", reject);
  });
}

/** `tsc --noEmit --strict` on the hook and the SDK, from memory. */
function typeCheck(ts, req, sdkFile) {
  const hookFile = "/__hookrt_hook__/hook.ts";
  const libDir = dirname(ts.getDefaultLibFilePath({}));
  const sdkDir = join(req.sdk, "src");
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts"],
    types: [],
    skipLibCheck: true,
    paths: { [SDK_MODULE]: [sdkFile] },
  };
  const allowed = (f) => f === hookFile || f.startsWith(sdkDir + "/") || f.startsWith(libDir + "/");
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => (f === hookFile ? req.source : allowed(f) ? read(f) : undefined);
  host.fileExists = (f) => host.readFile(f) !== undefined;
  host.directoryExists = (d) => hookFile.startsWith(d) || sdkDir.startsWith(d) || libDir.startsWith(d);
  host.getDirectories = () => [];
  host.realpath = (p) => p;
  host.getCurrentDirectory = () => "/__hookrt_hook__";
  const program = ts.createProgram([hookFile, join(sdkDir, "host.d.ts")], options, host);
  const diags = ts.getPreEmitDiagnostics(program);
  if (diags.length === 0) return;
  const lines = diags.slice(0, 20).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
    if (!d.file) return `${req.path}: ${text}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const file = d.file.fileName === hookFile ? req.path : d.file.fileName;
    // 2353: an object literal key the type does not have, e.g. a misspelled kind.
    if (d.code === 2307) return `${file}:${line + 1}:${character + 1}: ${text}\n  fix: ${FIX}`;
    const hint = d.code === 2353 ? " (a handler key is an event kind, `observe:<kind>`, `rewrite:<kind>`, `*` or `configure`; kinds are listed in docs/envelope.md)" : "";
    return `${file}:${line + 1}:${character + 1}: ${text}${hint}`;
  });
  fail(`type errors (TypeScript ${ts.version}, strict):\n${lines.join("\n")}`);
}

/** The hook and the SDK as one ES module; the host imports it keeps. */
async function bundle(esbuild, req, sdkFile) {
  const entry = [
    `import hook from "hookrt-hook:source";`,
    `const ok = hook !== null && typeof hook === "object" && hook.__hookrt === "define-hook@0.4.0";`,
    `const refuse = () => { throw ${JSON.stringify(`${req.path} does not \`export default defineHook({...})\` (import { defineHook } from "hookrt")`)}; };`,
    `export const configure = ok ? (c) => hook.configure(c) : refuse;`,
    `export const subscriptions = ok ? () => hook.subscriptions() : () => [];`,
    `export const handle = ok ? (e, c) => hook.handle(e, c) : refuse;`,
  ].join("\n");
  const resolver = {
    name: "hookrt-only",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        const fromEntry = args.namespace !== "hookrt-hook" && args.namespace !== "hookrt-sdk";
        if (args.path === "hookrt-hook:source" && fromEntry) {
          return { path: req.path, namespace: "hookrt-hook" };
        }
        if (args.path === SDK_MODULE) return { path: sdkFile, namespace: "hookrt-sdk" };
        if (args.path.startsWith(HOST_PREFIX) && args.namespace === "hookrt-sdk") {
          return { path: args.path, external: true, sideEffects: false };
        }
        // The SDK's own modules (`./grants`), beside its entry and nowhere else.
        if (args.namespace === "hookrt-sdk" && /^\.\/[a-z]+$/.test(args.path)) {
          return { path: join(dirname(sdkFile), `${args.path.slice(2)}.ts`), namespace: "hookrt-sdk" };
        }
        return { errors: [{ text: `import "${args.path}" is not allowed` }] };
      });
      build.onLoad({ filter: /.*/, namespace: "hookrt-hook" }, () => ({
        contents: req.source,
        loader: req.lang,
      }));
      build.onLoad({ filter: /.*/, namespace: "hookrt-sdk" }, async (args) => ({
        contents: await readFile(args.path, "utf8"),
        loader: "ts",
      }));
    },
  };
  const work = await mkdtemp(join(tmpdir(), "hookrt-esbuild-"));
  let result;
  try {
    result = await esbuild.build({
      stdin: { contents: entry, loader: "js", sourcefile: "hookrt-entry.js" },
      absWorkingDir: work,
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      metafile: true,
      logLevel: "silent",
      tsconfigRaw: "{}",
      plugins: [resolver],
    });
  } catch (e) {
    const errors = e.errors ?? [];
    if (errors.length === 0) fail(String(e.message ?? e));
    fail(
      errors
        .map((m) => {
          const file = m.location?.file.replace(/^hookrt-(hook|sdk):/, "");
          const at = m.location ? `${file}:${m.location.line}:${m.location.column + 1}: ` : `${req.path}: `;
          const fix = m.text.startsWith("import ") ? `\n  fix: ${FIX}` : "";
          return `${at}${m.text}${fix}`;
        })
        .join("\n"),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const out = result.outputFiles[0];
  const meta = Object.values(result.metafile.outputs)[0];
  const hostImports = [
    ...new Set(
      meta.imports
        .filter((i) => i.external && i.path.startsWith(HOST_PREFIX))
        .map((i) => i.path.slice(HOST_PREFIX.length).split("@")[0]),
    ),
  ].sort();
  return { code: out.text, hostImports };
}

/** A copy of the world whose `import`s are only the host interfaces the bundle uses. */
async function filteredWit(witFile, used) {
  let text = await readFile(witFile, "utf8");
  for (const name of WORLD_IMPORTS) {
    const line = new RegExp(`^\\s*import ${name};\\s*$`, "m");
    if (!line.test(text)) fail(`${witFile} has no \`import ${name};\` in its world: the SDK and the WIT disagree`);
    if (!used.includes(name)) text = text.replace(line, "");
  }
  const dir = await mkdtemp(join(tmpdir(), "hookrt-wit-"));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "hook.wit"), text);
  return dir;
}

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

main().catch((e) => fail(`componentize failed: ${e?.stack ?? e}`));
