#!/usr/bin/env bash
# scripts/symbol-graph.sh PACKAGE OUTPUT: builds the Sluice module of the
# sluice checkout at PACKAGE and writes its public symbol graph to OUTPUT
# (Sluice.symbols.json), with the declarations of the stage modules that
# Sluice re-exports: the whole API an app reaches through `import Sluice`.
# SwiftPM's own symbol graphs leave re-exported declarations out;
# swift-symbolgraph-extract keeps them when told which modules may be
# re-exported. scripts/docs.sh and scripts/api-check.sh read it.
set -euo pipefail
package=$(realpath "$1")
output=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --package-path "$package" --target Sluice >"$log" 2>&1 || { cat "$log"; exit 1; }
modules=$(swift build --package-path "$package" --target Sluice --show-bin-path)/Modules
flags=()
for map in "$package"/Sources/CSluice*/module.modulemap "$package"/Sources/CSluice*/include/module.modulemap \
  "$package"/.build/checkouts/Yams/Sources/CYaml/include/module.modulemap; do
  flags+=(-Xcc "-fmodule-map-file=$map")
done
for flag in $(pkg-config --cflags-only-I libxml-2.0 libpq yajl sqlite3); do flags+=(-Xcc "$flag"); done
target=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
rm -rf "$output" && mkdir -p "$output"
swift-symbolgraph-extract -module-name Sluice -I "$modules" "${flags[@]}" \
  -target "$target" -minimum-access-level public -output-dir "$output" \
  -experimental-allowed-reexported-modules=SluiceInput,SluiceParsers,SluiceRecords,SluiceBatching,SluiceStore \
  >"$log" 2>&1 || { cat "$log"; exit 1; }
