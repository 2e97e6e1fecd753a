#!/usr/bin/env bash
# The README's second command: the format check (scripts/lint.sh), every
# test (unit tests per stage, end-to-end tests on the real files in
# Tests/Corpora, CLI tests, the library example), then the DocC catalog,
# which must build without a warning.
#
# The CLI tests run the release build of `sluice` (and of the library
# example), built here first and named by SLUICE_TEST_PRODUCTS
# (TestPaths.builtProduct): the binary users run, and most of the tests'
# time is its work (a 50,000-event import: 9.16 s CPU debug, 1.36 s
# release). On a clean clone on this 2-core machine the release build took
# 168 s wall (237 s CPU) and `swift test` 1,105 s (1,651 s CPU) against
# 2,862 s (3,094 s CPU) on the debug binary. The unit and library tests stay
# a debug build, assertions on. A plain `swift test` runs the debug binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/lint.sh
scripts/build.sh --product sluice
scripts/build.sh --product sluice-library-example
SLUICE_TEST_PRODUCTS=$(scripts/build.sh --show-bin-path) swift test
scripts/docs.sh
