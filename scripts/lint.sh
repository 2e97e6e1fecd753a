#!/usr/bin/env bash
# Checks the Swift sources against .swift-format with the toolchain's
# `swift format` in lint mode; any finding fails. `scripts/lint.sh --fix`
# rewrites the files in place instead.
#
# .swift-format keeps swift-format's defaults with two departures:
# - lineLength 120 (default 100): the project's limit, wide enough for the
#   doc comments and SQL strings that break badly at 100;
# - indentation 4 spaces (default 2): the indentation the code has always
#   had, Xcode's default, which keeps blame and diffs of every line intact.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Snippets Tests Benchmarks/Package.swift Benchmarks/Benchmarks Fuzz/Package.swift Fuzz/Sources Examples)
if [[ "${1:-}" == "--fix" ]]; then
    swift format format --in-place --recursive --parallel "${paths[@]}"
else
    swift format lint --strict --recursive --parallel "${paths[@]}"
fi
