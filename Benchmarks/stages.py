#!/usr/bin/env python3
"""Instructions per record of each stage of one import, counted by callgrind.

    python3 Benchmarks/stages.py --binary .build/release/sluice --records 20000 \\
        -- import --mapping Benchmarks/events.yml --into null: events.jsonl

copies the binary with its debug information stripped (valgrind 3.19 cannot
read DWARF 5), runs it under callgrind with the arguments after `--`, and
prints each stage's inclusive instructions divided by `--records`. Callgrind
counts every thread; the stages are the parse thread's parts (validation,
yajl's own lexing, record assembly, mapping and batching, the rest of the
record hand-off: unit keys and digests) and the store and merge threads.
`--keep FILE` keeps callgrind's output; `--from FILE` reads one instead of
running. Counts repeat exactly from run to run, unlike times on a shared
machine. Note that valgrind does not emulate SHA-NI, so the digests' SHA-256
is counted on OpenSSL's software path (docs/record-digests.md).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Inclusive cost of a function: a pattern on its (mangled) name.
STAGES = [
    ("parse thread (parser, assembly, mapping, batching)", r"ParseSideC4feed"),
    ("  UTF-8 and escape validation", r"JSONTextValidatorV5check"),
    ("  yajl's own lexing", None),
    ("  record assembly (the parser's callbacks)", None),
    ("  mapping and batching (Batcher.record)", r"BatcherC6record_8entities"),
    ("  unit keys and digests of the record", None),
    ("  rest of the parse thread (hashing units, cutting groups)", None),
    ("store thread (sort and spill; the store's apply)", r"StoreSideC3runyyF"),
    ("merge thread (merging sorted runs)", r"MergedBatchFeedC6sorter4rows5bytes.*cfU_$"),
    ("whole process", None),
]


def blocks(path):
    """Each function's inclusive cost and its callees' costs."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--tree=calling", path],
        capture_output=True, text=True, check=True).stdout.splitlines()
    found, current, total = {}, None, 0
    for line in out:
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        match = re.match(r"\s*([\d,]+) \([ \d.]+%\)  ([*>]) +(\S+)", line)
        if not match:
            continue
        cost, kind, name = int(match.group(1).replace(",", "")), match.group(2), match.group(3)
        if kind == "*":
            current = name
            found.setdefault(name, [cost, []])
        elif current:
            found[current][1].append((name, cost))
    return found, total


def inclusive(found, pattern):
    return next((cost for name, (cost, _) in found.items() if re.search(pattern, name)), 0)


def figures(path):
    found, total = blocks(path)
    yajl = next((entry for name, entry in found.items() if name == "???:yajl_parse"), [0, []])
    callbacks = sum(cost for name, cost in yajl[1] if "makeCallbacks" in name)
    sink = inclusive(found, r"ParseSideC0A7Records10RecordSinkAadEP6record")
    values = {label: inclusive(found, pattern) for label, pattern in STAGES if pattern}
    batch = values["  mapping and batching (Batcher.record)"]
    feed = values["parse thread (parser, assembly, mapping, batching)"]
    validation = values["  UTF-8 and escape validation"]
    values["  yajl's own lexing"] = yajl[0] - callbacks
    values["  record assembly (the parser's callbacks)"] = callbacks - sink
    values["  unit keys and digests of the record"] = sink - batch
    values["  rest of the parse thread (hashing units, cutting groups)"] = feed - validation - yajl[0]
    values["whole process"] = total
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/sluice")
    parser.add_argument("--records", type=int, required=True, help="records in the input, to divide by")
    parser.add_argument("--keep", help="where to keep callgrind's output")
    parser.add_argument("--from", dest="source", help="read this callgrind output instead of running")
    parser.add_argument("arguments", nargs="*", help="the sluice command line, after --")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        output = options.source
        if not output:
            if not options.arguments:
                sys.exit("give the sluice command line after --, or --from FILE")
            stripped = os.path.join(work, "sluice")
            shutil.copy(options.binary, stripped)
            subprocess.run(["objcopy", "--strip-debug", stripped], check=True)
            output = options.keep or os.path.join(work, "callgrind.out")
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={output}", stripped, *options.arguments],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        values = figures(output)
        for label, _ in STAGES:
            print(f"{label:62s} {values[label] / options.records:9,.0f}")


if __name__ == "__main__":
    main()
