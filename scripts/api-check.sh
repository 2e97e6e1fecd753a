#!/usr/bin/env bash
# Fails when the public API an app reaches through `import Sluice` breaks
# what the last release offered: a public declaration of the newest tag
# (version order) that this checkout removed or declares otherwise, or a
# conformance it dropped. Both sides are the public symbol graph of Sluice
# with the stage modules it re-exports (scripts/symbol-graph.sh); additions
# are fine. Before the first release there is no tag to compare with; the
# script says so and passes. `scripts/api-check.sh TREEISH` compares with
# another revision.
#
# The tag's side is read from scripts/api/TAG.json, the declarations and
# conformances of its symbol graph, which `scripts/api-check.sh --record`
# (or `--record TAG`) writes from the tag's source once, when the tag is
# made. Building the tag instead costs a whole extra debug build of the
# library (on a clean clone the check took 112 s wall, 147 s CPU, with it;
# 56 s, 91 s CPU, reading the file; the build of this checkout is the one
# the tests reuse); the script still does so, saying why, when no stored
# file matches the tag.
#
# Not `swift package diagnose-api-breaking-changes`: it compares only the
# modules its library products name (Sluice, not the stages it re-exports,
# so it passed a changed InputError case), and its API dumps hold `package`
# declarations too, so a change to the machinery would read as a break.
set -euo pipefail
cd "$(dirname "$0")/.."
record=false
if [[ "${1:-}" == "--record" ]]; then
  record=true
  shift
fi
baseline=${1:-$(git tag --list --sort=-version:refname | head -n 1)}
if [[ -z "$baseline" ]]; then
  echo "api-check: skipped: no release tag yet (git tag lists none), so there is no API to keep"
  exit 0
fi
work=.build/api-check
stored=scripts/api/$baseline.json

# api.py declarations GRAPH OUT: the public declarations (identifier, path,
# declaration) and conformances of a symbol graph, as scripts/api/TAG.json
# keeps them; api.py compare TAG OLD GRAPH: the breaks of GRAPH against OLD.
api_py() {
  python3 - "$@" <<'PYTHON'
import json, sys

def declarations(path):
    """Each public declaration by its identifier, as [path, declaration], and the conformances."""
    graph = json.load(open(path))
    symbols = {
        s["identifier"]["precise"]: [
            ".".join(s["pathComponents"]),
            "".join(f["spelling"] for f in s.get("declarationFragments", [])),
        ]
        for s in graph["symbols"]
    }
    conformances = sorted(
        {(r["source"], r["target"]) for r in graph["relationships"] if r["kind"] == "conformsTo"}
    )
    return {"declarations": symbols, "conformances": conformances}

if sys.argv[1] == "declarations":
    api = declarations(sys.argv[2])
    # One declaration or conformance a line, so that a new tag's file diffs readably.
    entries = [f" {json.dumps(key)}: {json.dumps(value)}" for key, value in sorted(api["declarations"].items())]
    pairs = [f"  {json.dumps(list(pair))}" for pair in api["conformances"]]
    with open(sys.argv[3], "w") as out:
        out.write('{"declarations": {\n' + ",\n".join(entries) + "\n},\n")
        out.write('"conformances": [\n' + ",\n".join(pairs) + "\n]}\n")
    sys.exit()

tag, before, after = sys.argv[2], json.load(open(sys.argv[3])), declarations(sys.argv[4])
old, new = before["declarations"], after["declarations"]
old_conformances = {tuple(c) for c in before["conformances"]}
new_conformances = {tuple(c) for c in after["conformances"]}
breaks = []
for identifier, (path, declaration) in sorted(old.items(), key=lambda item: item[1]):
    if identifier not in new:
        breaks.append(f"removed or changed: {path}: {declaration}")
    elif new[identifier][1] != declaration:
        breaks.append(f"changed: {path}: {declaration} is now {new[identifier][1]}")
for source, target in sorted(old_conformances - new_conformances):
    if source in old and source in new:
        breaks.append(f"conformance dropped: {old[source][0]}: {target}")
for line in breaks:
    print(f"api-check: {line}")
if breaks:
    sys.exit(f"api-check: the public API breaks {tag}'s in {len(breaks)} places (above)")
print(f"api-check: no breaking change since {tag} ({len(old)} public declarations kept)")
PYTHON
}

# The declarations of $baseline, built from its source, into $1.
build_baseline() {
  rm -rf "$work/source" && mkdir -p "$work/source"
  git archive "$baseline" | tar -x -C "$work/source"
  scripts/symbol-graph.sh "$work/source" "$work/baseline"
  api_py declarations "$work/baseline/Sluice.symbols.json" "$1"
}

if $record; then
  mkdir -p scripts/api
  build_baseline "$stored"
  echo "api-check: recorded $baseline's public API in $stored"
  exit 0
fi
echo "api-check: comparing the public API with $baseline"
if [[ -f "$stored" ]]; then
  old=$stored
else
  echo "api-check: no $stored (scripts/api-check.sh --record $baseline writes it): building $baseline"
  mkdir -p "$work"
  old=$work/baseline.json
  build_baseline "$old"
fi
scripts/symbol-graph.sh . "$work/current"
api_py compare "$baseline" "$old" "$work/current/Sluice.symbols.json"
