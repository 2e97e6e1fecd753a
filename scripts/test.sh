#!/usr/bin/env bash
# The README's second command: the format check (scripts/lint.sh), every
# test (unit tests per stage, end-to-end tests on the real files in
# Tests/Corpora, CLI tests, the library example), then the DocC catalog,
# which must build without a warning.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/lint.sh
swift test
scripts/docs.sh
