#!/usr/bin/env bash
# The README's first command: install what is missing, build in release mode,
# and import the shipped Stack Exchange sample into a store, printing counts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --product sluice
rm -f sample.sqlite sample.sqlite-wal sample.sqlite-shm
.build/release/sluice import --mapping Examples/stackexchange/mapping.yml --into sample.sqlite \
  Examples/stackexchange/sample/*.xml
