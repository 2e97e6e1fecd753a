#!/usr/bin/env python3
"""The nightly-sync benchmark: what a user of a nightly job lives with.

  Benchmarks/sync.py [--records 200000] [--work DIR]

On the events workload (Benchmarks/events.py) with the three-table mapping
(Benchmarks/events.yml), one store goes through:
  (a) the first import of day 0's dump;
  (b) the identical file again;
  (c) day 1's dump (1% of events changed, 0.5% new, 0.5% gone) with
      --delete-missing;
  (d) day 1's change set alone as a change file (the changed and new
      events, and {"id": K, "deleted": true} for each one gone; mapping
      Benchmarks/events-changes.yml), applied to the store as (b) left it;
      it must end where (c) did.
For each step: wall time, peak RSS (GNU time), bytes written by the process
(/proc/PID/io), and the rows written per table (inserted, updated, deleted,
from --stats-json; link rows as the change of the link table's row count),
then the ratios to (a) against the targets of issue 16.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import ROOT, SLUICE, run, sh  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "sluice-sync-bench"))
    a = ap.parse_args()
    n, work = a.records, a.work
    os.makedirs(work, exist_ok=True)
    sh("swift build -c release --product sluice >/dev/null", ROOT)
    generator = os.path.join(ROOT, "Benchmarks", "events.py")
    base, nextday, change = ("%s/%s%d.jsonl" % (work, name, n) for name in ("base", "nextday", "change"))
    if not os.path.exists(base):
        sh("python3 %s base %d %s" % (generator, n, base))
    if not os.path.exists(change):
        sh("python3 %s nextday %d %s --change %s" % (generator, n, nextday, change))
    mapping = os.path.join(ROOT, "Benchmarks", "events.yml")
    store = os.path.join(work, "sync.db")
    sh("rm -f %s %s-wal %s-shm" % (store, store, store))

    def step(name, arguments, expected, into=store, mapping=mapping):
        stats = os.path.join(work, "stats.json")
        links_before = link_rows(into)
        wall, rss, written = run("%s import --mapping %s --into %s --stats-json %s %s" % (SLUICE, mapping, into, stats, arguments), "", work)
        with open(stats) as f:
            entities = json.load(f)["entities"]
        rows = {name: "+%d ~%d -%d" % (c["inserted"], c["updated"], c["deleted"]) for name, c in entities.items()}
        rows["Event_tags"] = "%+d" % (link_rows(into) - links_before)
        return {"name": name, "wall": wall, "rss": rss, "written": written, "rows": rows, "expected": expected,
                "event": entities["Event"]}

    diff = "Event +%d ~%d -%d" % (n // 200, n // 100, n // 200)
    steps = [step("(a) first import", base, "+%d" % n), step("(b) the same file again", base, "nothing")]
    day0 = os.path.join(work, "day0.db")
    sh("cp %s %s; rm -f %s-wal %s-shm" % (store, day0, day0, day0))
    steps.append(step("(c) next day, --delete-missing", "--delete-missing " + nextday, diff))
    steps.append(step("(d) change file alone, on (b)'s store", change, diff, into=day0,
                      mapping=os.path.join(ROOT, "Benchmarks", "events-changes.yml")))
    first = steps[0]["wall"]
    print("sluice nightly sync, %s events (%s), one run each, same machine and session\n" % (f"{n:,}", os.path.basename(base)))
    print("| step | wall s | × (a) | peak RSS MiB | written MB | rows written (inserted ~updated -deleted) | expected |")
    print("|---|---|---|---|---|---|---|")
    for s in steps:
        rows = ", ".join("%s %s" % item for item in s["rows"].items())
        print("| %s | %.2f | %.2f | %.0f | %.0f | %s | %s |" % (s["name"], s["wall"], s["wall"] / first, s["rss"] / (1 << 20),
                                                             s["written"] / 1e6, rows, s["expected"]))
    b, c, d = steps[1], steps[2], steps[3]
    print("\nTargets (issue 16): (b) ≤ 1/3 of (a): %.2f %s; (c) ≤ 1/2 of (a): %.2f %s; (d) ≤ 1/20 of (a): %.3f %s; "
          "peak RSS ≤ 64 MiB: %.0f MiB %s"
          % (b["wall"] / first, "met" if b["wall"] <= first / 3 else "NOT met",
             c["wall"] / first, "met" if c["wall"] <= first / 2 else "NOT met",
             d["wall"] / first, "met" if d["wall"] <= first / 20 else "NOT met",
             max(s["rss"] for s in steps) / (1 << 20), "met" if max(s["rss"] for s in steps) <= 64 << 20 else "NOT met"))
    exact = all((s["event"]["inserted"], s["event"]["updated"], s["event"]["deleted"]) == (n // 200, n // 100, n // 200) for s in (c, d))
    same = fingerprint(store) == fingerprint(day0)
    print("(c) and (d) wrote exactly the diff of Event: %s; (d) ended where (c) did: %s"
          % ("yes" if exact else "NO: %s, %s" % (c["event"], d["event"]), "yes" if same else "NO"))
    if not exact or not same or b["event"]["updated"] or b["event"]["inserted"]:
        sys.exit("the sync did not follow the dump")


def fingerprint(store):
    """Row counts and column sums of the three tables, to compare two stores."""
    with sqlite3.connect(store) as db:
        return [db.execute(sql).fetchone() for sql in (
            "SELECT count(*), sum(id), sum(score), total(ratio), sum(length(title)), sum(public), count(body) FROM Event",
            "SELECT count(*), sum(Event_id), sum(length(Tag_name) * position) FROM Event_tags",
            "SELECT count(*), sum(id) FROM Actor", "SELECT count(*) FROM Tag")]


def link_rows(store):
    if not os.path.exists(store):
        return 0
    with sqlite3.connect(store) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'Event_tags'")]
        return db.execute("SELECT count(*) FROM Event_tags").fetchone()[0] if tables else 0


if __name__ == "__main__":
    main()
