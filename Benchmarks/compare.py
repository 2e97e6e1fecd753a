#!/usr/bin/env python3
"""Runs sluice beside the C baseline and the peers of ../shared/bench on the
generated events workload and prints one Markdown table: medians of wall time,
peak RSS and bytes written, and the paired ratio of each comparison.

  Benchmarks/compare.py [--records 200000] [--runs 3] [--work DIR] [--peers] [--no-formats]

It copies ../shared/bench into the work directory, builds the C tools there,
generates the data once (gen.py, kept between calls), builds sluice in
release mode, then runs each pair alternately (A B A B ...). Each command runs
under /usr/bin/time inside a shell that reads its own /proc/PID/io after the
command exits: a reaped child's I/O counts towards its parent, so write_bytes
is the command's own. --peers also runs sqlite-utils and the ijson loader
(pip install sqlite-utils ijson).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(os.path.dirname(ROOT), "shared", "bench")
SLUICE = os.path.join(ROOT, ".build", "release", "sluice")


def sh(command, cwd=None):
    subprocess.run(["/bin/sh", "-c", command], check=True, cwd=cwd)


def run(command, prep, cwd):
    """One timed run: (wall s, peak RSS bytes, bytes written)."""
    if prep:
        sh(prep, cwd)
    times = tempfile.mktemp()
    wrapped = "%s >/dev/null 2>%s.err; status=$?; grep '^write_bytes' /proc/$$/io >>%s.err; exit $status" % (command, times, times)
    result = subprocess.run(["/usr/bin/time", "-o", times, "-f", "%e %M", "/bin/sh", "-c", wrapped], cwd=cwd)
    with open(times) as f:
        wall, rss = f.read().split()[-2:]
    with open(times + ".err") as f:
        log = f.read()
    os.unlink(times)
    os.unlink(times + ".err")
    if result.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (result.returncode, command, log))
    written = int(log.strip().splitlines()[-1].split()[1])
    return float(wall), int(rss) * 1024, written


def pair(name, a, b, runs, cwd, store=None):
    """Runs (command, prep) pairs a and b alternately; returns a table row."""
    ra, rb = [], []
    for _ in range(runs):
        ra.append(run(a[0], a[1], cwd))
        if b:
            rb.append(run(b[0], b[1], cwd))
    size = os.path.getsize(os.path.join(cwd, store)) if store and os.path.exists(os.path.join(cwd, store)) else 0
    med = lambda rs, i: statistics.median(r[i] for r in rs)
    row = {"name": name, "a_wall": med(ra, 0), "a_rss": med(ra, 1), "a_written": med(ra, 2), "store": size}
    if b:
        ratios = [y[0] / x[0] for x, y in zip(ra, rb)]
        row.update(b_wall=med(rb, 0), b_rss=med(rb, 1), b_written=med(rb, 2),
                   ratio=statistics.median(ratios), ratio_min=min(ratios), ratio_max=max(ratios))
    print(format_row(row, a[2], b[2] if b else ""), flush=True)
    return row


def format_row(row, a_name, b_name):
    mib = lambda n: "%.0f" % (n / (1 << 20))
    mb = lambda n: "%.0f" % (n / 1e6)
    cells = [row["name"], "%.2f" % row["a_wall"], mib(row["a_rss"]), mb(row["a_written"]),
             mb(row["store"]) if row["store"] else ""]
    if "ratio" in row:
        cells += [b_name, "%.2f" % row["b_wall"], mib(row["b_rss"]), mb(row["b_written"]),
                  "%.2f× [%.2f–%.2f]" % (row["ratio"], row["ratio_min"], row["ratio_max"])]
    else:
        cells += [b_name, "", "", "", ""]
    return "| " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "sluice-bench"))
    ap.add_argument("--peers", action="store_true")
    ap.add_argument("--no-formats", action="store_true", help="skip the JSON array and XML pairs (for long runs)")
    a = ap.parse_args()
    work = a.work
    if not os.path.exists(os.path.join(work, "gen.py")):
        shutil.copytree(BENCH, work, dirs_exist_ok=True)
    sh("make -s", work)
    sh("swift build -c release --product sluice >/dev/null", ROOT)
    os.makedirs(os.path.join(work, "data"), exist_ok=True)
    n = a.records
    data = "data/ev%d" % n
    if not os.path.exists(os.path.join(work, data + ".tsv")):
        sh("python3 gen.py -n %d -o %s" % (n, data), work)
    if not os.path.exists(os.path.join(work, data + ".update.tsv")):
        sh("python3 gen.py -n %d --update %d -o %s.update" % (n, n // 5, data), work)
    mapping = lambda name: os.path.join(ROOT, "Benchmarks", name)
    sluice = lambda m, store, files: "%s import --mapping %s --into %s %s" % (SLUICE, mapping(m), store, files)
    fresh = lambda store: "rm -f %s %s-wal %s-shm" % (store, store, store)
    c = lambda mode, store, tsv: "./build/sqlite_insert -s -m %s %s %s" % (mode, store, tsv)

    print("sluice %s records, %d runs each, medians; ratio = B's wall time / sluice's (above 1: sluice is faster)\n" % (f"{n:,}", a.runs))
    print("| case | sluice s | RSS MiB | written MB | store MB | B | B s | B RSS MiB | B written MB | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    jsonl = data + ".jsonl"
    pair("JSON Lines, new store", (sluice("events.yml", "s.db", jsonl), fresh("s.db"), "sluice"),
         (c("insert", "c.db", data + ".tsv"), fresh("c.db"), "C sqlite_insert -s"), a.runs, work, "s.db")
    pair("unchanged re-import", (sluice("events.yml", "s.db", jsonl), "", "sluice"),
         (sluice("events.yml", "s2.db", jsonl), fresh("s2.db"), "sluice, first import"), a.runs, work)
    pair("update file (half new)", (sluice("events.yml", "su.db", data + ".update.jsonl"), "cp s.db su.db; rm -f su.db-wal su.db-shm", "sluice"),
         (c("upsert", "cu.db", data + ".update.tsv"), "rm -f cu.db*; %s >/dev/null" % c("insert", "cu.db", data + ".tsv"), "C upsert -s"),
         a.runs, work)
    if not a.no_formats:
        pair("JSON array", (sluice("events-array.yml", "sa.db", data + ".json"), fresh("sa.db"), "sluice"),
             (sluice("events.yml", "s3.db", jsonl), fresh("s3.db"), "sluice, JSON Lines"), a.runs, work)
        pair("XML", (sluice("events-xml.yml", "sx.db", data + ".xml"), fresh("sx.db"), "sluice"),
             (sluice("events.yml", "s3.db", jsonl), fresh("s3.db"), "sluice, JSON Lines"), a.runs, work)
    if a.peers:
        pair("JSON Lines vs sqlite-utils", (sluice("events.yml", "s.db", jsonl), fresh("s.db"), "sluice"),
             ("sqlite-utils insert p.db events %s --nl --pk id" % jsonl, fresh("p.db"), "sqlite-utils --nl"), a.runs, work)
        pair("JSON Lines vs ijson", (sluice("events.yml", "s.db", jsonl), fresh("s.db"), "sluice"),
             ("python3 peer_ijson.py --nl i.db %s" % jsonl, fresh("i.db"), "ijson + sqlite3"), a.runs, work)


if __name__ == "__main__":
    main()
