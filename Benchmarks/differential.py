#!/usr/bin/env python3
"""The differential test of record digests at scale, for a run by hand.

  Benchmarks/differential.py [--records 200000] [--steps 8] [--seed N] [--postgres] [--format xml]

Runs one sequence of nightly runs of DifferentialSyncTests (the generator
is Tests/SluiceTestSupport/SyncSequence.swift, the runs and the comparison
Tests/SluiceCLITests/DifferentialSync.swift) at --records lines a dump:
two stores, one with skipping runs and one with full runs, the release
binary on both, compared table by table, row by row, after every step.
CI runs 200 sequences of 24 records; this runs the same code on one large
sequence. Exits non-zero, printing the seed, the steps and the first
differing row, when the stores differ. `--format xml` runs the XML form
(each record an element of a document with a DOCTYPE and a namespace),
its runs at the default threads, so that a run that skips hashes on the
parse workers; `--format json` the form of one JSON document.
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import ROOT, SLUICE, sh  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20_261_125)
    ap.add_argument("--postgres", action="store_true", help="on two databases of a private PostgreSQL server")
    ap.add_argument("--format", choices=("jsonl", "xml", "json"), default="jsonl")
    a = ap.parse_args()
    if a.postgres and a.format != "jsonl":
        sys.exit("--postgres runs the JSON Lines form only")
    sh("scripts/build.sh --product sluice >/dev/null", ROOT)
    sh("swift build --build-tests >/dev/null", ROOT)
    form = {"jsonl": "skippingRuns", "xml": "skippingXMLRunsLeave", "json": "skippingJSONDocumentRunsLeave"}[a.format]
    suite = "SluiceCLITests.%sDifferentialSyncTests/%s" % ("Postgres" if a.postgres else "", form)
    environment = dict(os.environ, SLUICE_DIFFERENTIAL_BINARY=SLUICE, SLUICE_DIFFERENTIAL_SEEDS="1",
                       SLUICE_DIFFERENTIAL_PG_SEEDS="1", SLUICE_DIFFERENTIAL_SEED=str(a.seed),
                       SLUICE_DIFFERENTIAL_RECORDS=str(a.records), SLUICE_DIFFERENTIAL_STEPS=str(a.steps))
    started = time.time()
    result = subprocess.run(["swift", "test", "--skip-build", "--filter", suite], cwd=ROOT, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(result.stdout)
    # A filter that matched no test passes too: require a test run's line
    # (the JSON Lines filter matches four forms: one thread, two, three, standard input).
    ran = re.search(r"Test run with [1-9][0-9]* tests? ", result.stdout) is not None
    verdict = ("the stores agree" if result.returncode == 0 and ran
               else "NO TEST RAN" if not ran else "THE STORES DIFFER (or a run failed)")
    print("differential sequence: seed %d, %s records, %d steps, %s, %s: %s in %.0f s"
          % (a.seed, f"{a.records:,}", a.steps, a.format, "PostgreSQL" if a.postgres else "SQLite", verdict,
             time.time() - started))
    sys.exit(0 if result.returncode == 0 and ran else 1)


if __name__ == "__main__":
    main()
