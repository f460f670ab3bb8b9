#!/usr/bin/env node
// The `hookrt` command of the npm package: runs the binary of this
// platform's package (an optional dependency npm installed beside this one,
// as esbuild and biome do: no install script, nothing downloaded later).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = @PLATFORMS@;
const name = PLATFORMS[`${process.platform}-${process.arch}`];
if (!name) {
  console.error(
    `hookrt: no package for ${process.platform}-${process.arch}; there are: ${Object.keys(PLATFORMS).join(", ")} (docs/install.md: build from source)`
  );
  process.exit(1);
}
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "hookrt");
} catch {
  console.error(
    `hookrt: the package ${name} is not installed beside hookrt; install it (npm install ${name}@@VERSION@), or do not pass --omit=optional`
  );
  process.exit(1);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`hookrt: cannot run ${binary}: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status === null ? 1 : run.status);
