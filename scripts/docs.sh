#!/usr/bin/env bash
# Builds the DocC catalog of the Sluice library (Sources/Sluice/Sluice.docc)
# with swift-docc-plugin and fails on any warning. The archive lands in
# .build/plugins/Swift-DocC/outputs/Sluice.doccarchive.
#
# The public types an app reaches through `import Sluice` include those the
# stage modules declare and Sluice re-exports (the mapping, hooks, options,
# errors). SwiftPM's symbol graph of Sluice leaves re-exported declarations
# out, so this script hands DocC a second graph of Sluice that keeps them
# (scripts/symbol-graph.sh), and DocC merges the two: every public type has
# its page.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
graphs=.build/sluice-reexported-symbols
scripts/symbol-graph.sh . "$graphs"
swift package generate-documentation --target Sluice --additional-symbol-graph-dir "$graphs" >"$log" 2>&1 ||
  { cat "$log"; exit 1; }
if grep -q "warning:" "$log"; then
  grep -A4 "warning:" "$log"
  echo "docs: the DocC catalog has warnings" >&2
  exit 1
fi
echo "docs: the DocC catalog built without warnings ($(grep -o 'Generated documentation archive at:' "$log" >/dev/null && echo .build/plugins/Swift-DocC/outputs/Sluice.doccarchive))"
