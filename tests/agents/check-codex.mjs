// Validates JSON documents against Codex CLI's own hook schemas, with Ajv
// (draft-07, as the schemas declare), for tests/serve/agents.rs.
//
//   node check-codex.mjs SCHEMA_DIR CHECKS.json
//
// CHECKS.json is a list of {what, schema, value}: `schema` is a file name in
// SCHEMA_DIR (e.g. `pre-tool-use.command.output.schema.json`). Prints one
// line per document that does not validate, with Ajv's errors, and exits 1
// if there is one; exits 0 when every document validates.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

// Ajv is the one installed by scripts/agents: resolved from the working
// folder the tests run this in (target/agents).
const require = createRequire(join(process.cwd(), "package.json"));
const Ajv = require("ajv");

const [schemaDir, checksFile] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map();
const validator = (name) => {
  if (!compiled.has(name)) {
    const schema = JSON.parse(readFileSync(join(schemaDir, name), "utf8"));
    compiled.set(name, ajv.compile(schema));
  }
  return compiled.get(name);
};
let failed = 0;
for (const { what, schema, value } of JSON.parse(readFileSync(checksFile, "utf8"))) {
  const validate = validator(schema);
  if (!validate(value)) {
    failed++;
    console.log(`${what} (${schema}): ${JSON.stringify(validate.errors)}\n  ${JSON.stringify(value)}`);
  }
}
process.exit(failed ? 1 : 0);
