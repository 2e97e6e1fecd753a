#!/usr/bin/env bash
# Builds the DocC catalog of the Sluice library (Sources/Sluice/Sluice.docc)
# with swift-docc-plugin and fails on any warning. The archive lands in
# .build/plugins/Swift-DocC/outputs/Sluice.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift package generate-documentation --target Sluice >"$log" 2>&1 || { cat "$log"; exit 1; }
if grep -q "warning:" "$log"; then
  grep -A4 "warning:" "$log"
  echo "docs: the DocC catalog has warnings" >&2
  exit 1
fi
echo "docs: the DocC catalog built without warnings ($(grep -o 'Generated documentation archive at:' "$log" >/dev/null && echo .build/plugins/Swift-DocC/outputs/Sluice.doccarchive))"
