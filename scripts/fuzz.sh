#!/usr/bin/env bash
# Builds the libFuzzer target (Fuzz/, coverage-instrumented with
# -sanitize=fuzzer) and runs it on a corpus seeded from the repository's
# samples. `scripts/fuzz.sh 600` fuzzes for ten minutes; `scripts/fuzz.sh --ci`
# runs 2,000 inputs from a fixed seed (3,000 took 69-80 s in CI, and
# CI was at its 30-minute budget), built without optimisation: that build
# took 75 s against 195 s optimised, and the 2,000 inputs 59 s against 52 s,
# each input's time mostly its store's files. Findings (inputs that
# crashed or hit a store error) are written to Fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp Examples/stackexchange/sample/Tags.xml Examples/stackexchange/sample/PostLinks.xml "$corpus"/
printf '%s\n' '{"id": 1, "type": "t", "at": "2024-05-01T12:00:00Z", "n": 1.5, "ok": true, "actor": {"id": 7, "login": "u"}, "tags": ["a", "b"], "text": "caf\u00e9 \"q\""}' \
  '{"id": 2, "type": "u", "at": 1714564800, "n": -2, "ok": false, "actor": {"id": 8}, "tags": [], "text": null}' >"$corpus/events.jsonl"
mkdir -p Fuzz/findings
if [ "${1:-}" = "--ci" ]; then
  limits=(-seed=1 -runs=2000)
  optimisation=(-Xswiftc -Onone)
else
  limits=(-max_total_time="${1:-60}")
  optimisation=()
fi
(cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer "${optimisation[@]}" --product SluiceFuzzer >/dev/null)
Fuzz/.build/release/SluiceFuzzer "${limits[@]}" -rss_limit_mb=1024 -artifact_prefix="$root/Fuzz/findings/" "$corpus" 2>&1 | tail -n 3
