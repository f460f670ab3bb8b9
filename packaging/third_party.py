#!/usr/bin/env python3
"""Prints THIRD-PARTY.md: every crate compiled into the hookrt binary
(hookrt-cli's dependency graph for a target, this platform's unless one is
given, as `cargo metadata` resolves it) with its version, licence and
source, for the release archives (scripts/dist).

    third_party.py [TARGET]
"""

import json
import subprocess
import sys

host = sys.argv[1] if len(sys.argv) > 1 else next(l.split(": ", 1)[1] for l in subprocess.run(
    ["rustc", "-vV"], check=True, capture_output=True, text=True).stdout.splitlines()
    if l.startswith("host: "))
meta = json.loads(subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", host],
    check=True, capture_output=True, text=True).stdout)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
root = next(p["id"] for p in meta["packages"] if p["name"] == "hookrt-cli")
seen, todo = set(), [root]
while todo:
    node = nodes[todo.pop()]
    for dep in node["deps"]:
        if any(k["kind"] in (None, "normal") for k in dep["dep_kinds"]) and dep["pkg"] not in seen:
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
print("# Third-party crates in hookrt\n")
print("Each crate compiled into the `hookrt` binary, with its licence as its manifest states it.\n")
print("| crate | version | licence | source |")
print("|---|---|---|---|")
for pid in sorted(seen, key=lambda i: (packages[i]["name"], packages[i]["version"])):
    p = packages[pid]
    source = "this repository" if p["source"] is None else (p.get("repository") or "crates.io")
    print(f"| {p['name']} | {p['version']} | {p.get('license') or 'see its manifest'} | {source} |")
