#!/usr/bin/env python3
"""Writes the npm packages of a release (scripts/dist): `hookrt-OS-CPU`
for each platform built, holding its binaries, hookrt and hookrt-hook (`os` and `cpu` set, so npm
installs it only there), and `hookrt`, the launcher with every platform
package as an optional dependency (the esbuild/biome pattern: no install
script, which `npm ci --ignore-scripts` would not run anyway). Each is
packed with `npm pack` into OUT when npm is here, else left as a folder.

    pack.py VERSION OUT TARGET=BINARY...
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Rust's target triples as npm's `os` and `cpu`.
NODE = {
    "x86_64-unknown-linux-gnu": ("linux", "x64"),
    "aarch64-unknown-linux-gnu": ("linux", "arm64"),
    "x86_64-apple-darwin": ("darwin", "x64"),
    "aarch64-apple-darwin": ("darwin", "arm64"),
}

version, out = sys.argv[1], Path(sys.argv[2])
binaries = {}
for arg in sys.argv[3:]:
    target, _, binary = arg.partition("=")
    if target not in NODE or not binary:
        sys.exit(f"pack.py: `{arg}` is not TARGET=BINARY with a target of {', '.join(NODE)}")
    binaries[target] = Path(binary)
if not binaries:
    sys.exit("pack.py: no TARGET=BINARY given")
here = Path(__file__).resolve().parent
# The platform packages this release holds.
platforms = {"-".join(NODE[t]): "hookrt-" + "-".join(NODE[t]) for t in binaries}
common = {"version": version, "license": "Apache-2.0", "repository": "https://github.com/hookrt/hookrt"}

out.mkdir(parents=True, exist_ok=True)
stage = out / "stage"
shutil.rmtree(stage, ignore_errors=True)

packages = []
for target, binary in binaries.items():
    node_os, node_cpu = NODE[target]
    plat = stage / f"hookrt-{node_os}-{node_cpu}"
    (plat / "bin").mkdir(parents=True)
    # hookrt, and beside it hookrt-hook, the thin client the agents' hook
    # entries run (`hookrt install` writes the one beside the hookrt it runs).
    for name in ("hookrt", "hookrt-hook"):
        source = binary.with_name(name)
        if not source.is_file():
            sys.exit(f"pack.py: no {name} beside {binary}")
        shutil.copy2(source, plat / "bin" / name)
        os.chmod(plat / "bin" / name, 0o755)
    (plat / "package.json").write_text(json.dumps({
        "name": plat.name, **common,
        "description": f"The hookrt binary for {node_os} {node_cpu} (installed by the hookrt package)",
        "os": [node_os], "cpu": [node_cpu], "files": ["bin/hookrt", "bin/hookrt-hook"],
    }, indent=2) + "\n")
    packages.append(plat)

meta = stage / "hookrt"
(meta / "bin").mkdir(parents=True)
launcher = (here / "hookrt.js").read_text()
launcher = launcher.replace("@PLATFORMS@", json.dumps(platforms)).replace("@VERSION@", version)
(meta / "bin" / "hookrt.js").write_text(launcher)
os.chmod(meta / "bin" / "hookrt.js", 0o755)
(meta / "package.json").write_text(json.dumps({
    "name": "hookrt", **common,
    "description": "A WebAssembly-sandboxed hook runtime for AI agents: its hookrt command",
    "bin": {"hookrt": "bin/hookrt.js"},
    "files": ["bin/hookrt.js"],
    "optionalDependencies": {name: version for name in platforms.values()},
    "engines": {"node": ">=18"},
}, indent=2) + "\n")
packages.append(meta)
for src in ("LICENSE", "README.md"):
    root = here.parent.parent / src
    for pkg in packages:
        shutil.copy2(root, pkg / src)

if shutil.which("npm"):
    for pkg in packages:
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(out), str(pkg)],
                       check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(stage)
    print(f"npm packages: {', '.join(sorted(p.name for p in out.glob('*.tgz')))}", file=sys.stderr)
else:
    print(f"npm is not here: the npm packages are folders in {stage}", file=sys.stderr)
