#!/usr/bin/env bash
# Builds the DocC catalog of the Sluice library (Sources/Sluice/Sluice.docc)
# with swift-docc-plugin and fails on any warning. The archive lands in
# .build/plugins/Swift-DocC/outputs/Sluice.doccarchive.
#
# The public types an app reaches through `import Sluice` include those the
# stage modules declare and Sluice re-exports (the mapping, hooks, options,
# errors). SwiftPM's symbol graph of Sluice leaves re-exported declarations
# out, so this script extracts a second graph of Sluice that keeps them
# (swift-symbolgraph-extract's -experimental-allowed-reexported-modules) and
# hands it to DocC, which merges the two: every public type has its page.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
graphs=.build/sluice-reexported-symbols
swift build --target Sluice >"$log" 2>&1 || { cat "$log"; exit 1; }
modules=$(swift build --target Sluice --show-bin-path)/Modules
maps=()
for map in Sources/CSluice*/module.modulemap .build/checkouts/Yams/Sources/CYaml/include/module.modulemap; do
  maps+=(-Xcc "-fmodule-map-file=$PWD/$map")
done
includes=()
for flag in $(pkg-config --cflags-only-I libxml-2.0 libpq yajl sqlite3); do includes+=(-Xcc "$flag"); done
rm -rf "$graphs" && mkdir -p "$graphs"
swift-symbolgraph-extract -module-name Sluice -I "$modules" "${maps[@]}" "${includes[@]}" \
  -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$graphs" \
  -experimental-allowed-reexported-modules=SluiceInput,SluiceParsers,SluiceRecords,SluiceBatching,SluiceStore \
  >"$log" 2>&1 || { cat "$log"; exit 1; }
swift package generate-documentation --target Sluice --additional-symbol-graph-dir "$graphs" >"$log" 2>&1 ||
  { cat "$log"; exit 1; }
if grep -q "warning:" "$log"; then
  grep -A4 "warning:" "$log"
  echo "docs: the DocC catalog has warnings" >&2
  exit 1
fi
echo "docs: the DocC catalog built without warnings ($(grep -o 'Generated documentation archive at:' "$log" >/dev/null && echo .build/plugins/Swift-DocC/outputs/Sluice.doccarchive))"
