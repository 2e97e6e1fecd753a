#!/usr/bin/env bash
# The release build that the install, the tests, the quick start and the
# benchmarks all use: `swift build -c release` with the Swift runtime and
# Foundation linked into the binary (--static-swift-stdlib), arguments
# passed on (`scripts/build.sh --product sluice`, `--show-bin-path`).
#
# Linked in, `sluice` runs on a machine without a Swift toolchain (it needs
# only the Debian libraries of scripts/install-deps.sh), and it starts
# faster: the dynamic loader no longer binds ~20,000 symbols of the Swift
# libraries at every start. Measured on this 2-core machine, a run that
# syncs 24 records into its store (mostly the fixed cost of a run): 44.1 ms
# of CPU against 58.3 ms (perf stat, 30 runs each, ±1.4%), 81.3 M
# instructions against 101.5 M (callgrind). The binary is 89 MB against
# 19 MB, most of it ICU's data. Every build must use the same flags: a
# build without them rebuilds every module. The link prints glibc's
# warning that `mktemp` is dangerous: Foundation's static library
# (FoundationEssentials' createTemporaryFile) refers to it; it is the
# toolchain's, not sluice's, and a dynamic link does not show it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release --static-swift-stdlib "$@"
