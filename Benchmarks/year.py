#!/usr/bin/env python3
"""A simulated year of nightly syncs: does the store stay bounded?

  Benchmarks/year.py [--records 200000] [--nights 365] [--work DIR] [--out FILE]

One store, on the events workload (Benchmarks/events.py) with the
three-table mapping (Benchmarks/events.yml), takes day 0's dump and then
one dump a night, each under a dated name as a nightly download would be
(`events-2026-01-01.jsonl`, …), imported with --delete-missing. Each night
0.5% of the live events are gone, 0.5% are new and 1% changed (a changed
event's score and title change again every time it is drawn), so the
number of events stays near N and the store's content is a year of real
churn. After every night the script records the wall time and, read from
the store: its file and WAL sizes, page count and free pages (the space
SQLite will reuse before the file grows), the ledger's rows and the
checkpoints' rows. It prints a line every 30 nights and writes the series
as JSON (--out) for docs/nightly-sync.md; at the end, the size the store
would have once vacuumed.
"""
import argparse
import datetime
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import events  # noqa: E402
from compare import BENCHMARKS, ROOT, SLUICE, sh  # noqa: E402

SLUICE = os.environ.get("SLUICE", SLUICE)


def line(number, n, night):
    """Event `number` as of `night` (0: as day 0 has it)."""
    record = events.event(number, n)
    if night:
        record["score"] += night
        record["title"] = "%s (night %d)" % (record["title"], night)
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def measure_store(store):
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    value = lambda sql: db.execute(sql).fetchone()[0]
    result = {
        "file": os.path.getsize(store),
        "wal": os.path.getsize(store + "-wal") if os.path.exists(store + "-wal") else 0,
        "pages": value("PRAGMA page_count"),
        "free": value("PRAGMA freelist_count"),
        "page_size": value("PRAGMA page_size"),
        "runs": value("SELECT count(*) FROM _sluice_runs"),
        "checkpoints": value("SELECT count(*) FROM _sluice_checkpoints"),
        "events": value("SELECT count(*) FROM Event"),
        "statuses": sorted(set(r[0] for r in db.execute("SELECT status FROM _sluice_runs"))),
    }
    db.close()
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "sluice-year-bench"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-build", action="store_true", help="use .build/release/sluice as it is")
    a = ap.parse_args()
    n, work = a.records, a.work
    os.makedirs(work, exist_ok=True)
    if not a.no_build:
        sh("scripts/build.sh --product sluice >/dev/null", ROOT)
    store = os.path.join(work, "year.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    mapping = os.path.join(BENCHMARKS, "events.yml")
    rng = random.Random(events.SEED)
    live = {number: line(number, n, 0) for number in range(n)}
    next_number = n
    first = datetime.date(2026, 1, 1)
    series = []
    for night in range(a.nights + 1):
        if night:
            numbers = sorted(live)
            for number in rng.sample(numbers, len(numbers) // 200):
                del live[number]
            numbers = sorted(live)
            for number in rng.sample(numbers, len(numbers) // 100):
                live[number] = line(number, n, night)
            for _ in range(n // 200):
                live[next_number] = line(next_number, n, night)
                next_number += 1
        dump = os.path.join(work, "events-%s.jsonl" % (first + datetime.timedelta(days=night)).isoformat())
        order = list(live)
        random.Random(night).shuffle(order)
        with open(dump, "w", encoding="utf-8") as out:
            for number in order:
                out.write(live[number] + "\n")
        command = [SLUICE, "import", "--quiet", "--mapping", mapping, "--into", store, dump]
        if night:
            command.append("--delete-missing")
        started = time.monotonic()
        subprocess.run(command, check=True, cwd=work)
        wall = time.monotonic() - started
        os.remove(dump)
        point = {"night": night, "wall": round(wall, 3), **measure_store(store)}
        if point["events"] != len(live):
            sys.exit("night %d: %d events stored, %d in the dump" % (night, point["events"], len(live)))
        series.append(point)
        if night % 30 == 0 or night == a.nights:
            print("night %3d: %5.2f s, file %6.1f MB (free %5.1f MB), WAL %5.1f MB, ledger %4d runs, %4d checkpoints, %d events"
                  % (night, wall, point["file"] / 1e6, point["free"] * point["page_size"] / 1e6, point["wal"] / 1e6,
                     point["runs"], point["checkpoints"], point["events"]), flush=True)
    # What the year's churn left unused inside pages: the store rewritten
    # compact (as `VACUUM` would leave it), beside the store as it is.
    compact = os.path.join(work, "compact.sqlite")
    if os.path.exists(compact):
        os.remove(compact)
    db = sqlite3.connect(store)
    db.execute("VACUUM INTO ?", (compact,))
    db.close()
    compacted = os.path.getsize(compact)
    os.remove(compact)
    print("after %d nights: %.1f MB, %.1f MB once vacuumed (%.0f%% of the file)"
          % (a.nights, series[-1]["file"] / 1e6, compacted / 1e6, 100 * compacted / series[-1]["file"]))
    if a.out:
        with open(a.out, "w") as out:
            json.dump({"records": n, "nights": a.nights, "vacuumed": compacted, "series": series}, out, indent=1)


if __name__ == "__main__":
    main()
