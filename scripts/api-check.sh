#!/usr/bin/env bash
# Fails when the public API of the Sluice product (the Sluice module and
# the stage modules it re-exports) breaks what the last release offered:
# `swift package diagnose-api-breaking-changes` against the newest tag
# (version order). Before the first release there is no tag to compare
# with; the script says so and passes. `scripts/api-check.sh TREEISH`
# compares with another revision.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${1:-$(git tag --list --sort=-version:refname | head -n 1)}
if [[ -z "$baseline" ]]; then
  echo "api-check: skipped: no release tag yet (git tag lists none), so there is no API to keep"
  exit 0
fi
echo "api-check: comparing the public API with $baseline"
swift package diagnose-api-breaking-changes "$baseline" --products Sluice
