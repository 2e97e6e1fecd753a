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
# Not `swift package diagnose-api-breaking-changes`: it compares only the
# modules its library products name (Sluice, not the stages it re-exports,
# so it passed a changed InputError case), and its API dumps hold `package`
# declarations too, so a change to the machinery would read as a break.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${1:-$(git tag --list --sort=-version:refname | head -n 1)}
if [[ -z "$baseline" ]]; then
  echo "api-check: skipped: no release tag yet (git tag lists none), so there is no API to keep"
  exit 0
fi
work=.build/api-check
echo "api-check: comparing the public API with $baseline"
rm -rf "$work/source" && mkdir -p "$work/source"
git archive "$baseline" | tar -x -C "$work/source"
scripts/symbol-graph.sh "$work/source" "$work/baseline"
scripts/symbol-graph.sh . "$work/current"
python3 - "$baseline" "$work/baseline/Sluice.symbols.json" "$work/current/Sluice.symbols.json" <<'PYTHON'
import json, sys

def api(path):
    """Each public declaration by its identifier, as (path, declaration), and the conformances."""
    graph = json.load(open(path))
    symbols = {
        s["identifier"]["precise"]: (
            ".".join(s["pathComponents"]),
            "".join(f["spelling"] for f in s.get("declarationFragments", [])),
        )
        for s in graph["symbols"]
    }
    conformances = {
        (r["source"], r["target"]) for r in graph["relationships"] if r["kind"] == "conformsTo"
    }
    return symbols, conformances

tag, (old, old_conformances), (new, new_conformances) = sys.argv[1], api(sys.argv[2]), api(sys.argv[3])
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
