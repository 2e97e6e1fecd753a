#!/usr/bin/env python3
"""Runs sluice beside the loaders a user would pick instead, on the events
workload, and writes the results as JSON, a Markdown table and a plot.

  Benchmarks/compare.py [--records 200000] [--runs 3] [--work DIR] [--out DIR]
                        [--peers] [--no-formats] [--timeout 600] [--postgres]

Everything comes from this repository or is installed by the script:
  - the data: Benchmarks/events.py writes N events (shuffled integer keys, a
    nested actor, 0-5 tags, ~500 bytes each) as JSON Lines (also gzip -6 and
    zstd -3 compressed), a JSON array, XML
    and the C baseline's TSV, and an update file (N/10 changed, N/10 new);
  - the C baseline: Benchmarks/baseline/load.c, built with gcc against the
    system's SQLite (pre-parsed rows, batches sorted by key, prepared
    statements, the same three tables);
  - sluice: `scripts/build.sh` (a release build);
  - with --peers, in a virtual environment under the work directory (pip):
    sqlite-utils (insert/upsert --nl --pk id), an ijson + sqlite3 loader,
    DuckDB (read_json + keyed upsert) and dlt (write_disposition="merge")
    into DuckDB and into SQLite; matplotlib draws the plot either way.

With --postgres it then runs Benchmarks/postgres.py with the same records,
runs and directories: sluice into a PostgreSQL server of its own beside the
psql reference (postgres.md and postgres.json in the results).

Three cases: a first load into a new store, the unchanged file again, the
update file applied to the first load's store. Each round runs every tool
once per case, so the ratio to sluice pairs runs taken side by side; a
command over --timeout seconds is stopped and reported as such (slow tools
run once). Each run is a whole process: wall time, peak RSS (wait4) and
bytes written (/proc/PID/io of a shell that runs the command as its child).
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "Benchmarks")
SLUICE = os.path.join(ROOT, ".build", "release", "sluice")
CASES = [("first", "first load, new store"), ("again", "unchanged file again"), ("update", "update file")]
PEER_PACKAGES = ["sqlite-utils", "ijson", "duckdb", "dlt[duckdb,sqlalchemy]"]


def sh(command, cwd=None):
    subprocess.run(["/bin/sh", "-c", command], check=True, cwd=cwd)


def measure(command, cwd, timeout=None):
    """One whole-process run: {"wall", "rss", "written", "cpu"} or
    {"timeout"} / {"failed"}; cpu is the user and system seconds of the
    command and its children (wait4). The command runs under GNU time (peak RSS) under a shell
    that, once it is reaped, appends its own /proc/PID/io write_bytes (a
    reaped child's I/O is counted to its parent) to a file."""
    log = tempfile.mktemp()
    # The peak RSS is GNU time's of a shell it starts: a process forked from
    # this Python inherits its high-water mark (a 2,000,000-event run
    # reported 105 MiB for every tool, Python's own size).
    timed = "/usr/bin/time -f 'maxrss %%M' -o %s.rss /bin/sh -c %s" % (log, shlex.quote(command))
    wrapped = "%s >/dev/null 2>%s; s=$?; grep '^write_bytes' /proc/$$/io >>%s; exit $s" % (timed, log, log)
    start = time.monotonic()
    process = subprocess.Popen(["/bin/sh", "-c", wrapped], cwd=cwd, start_new_session=True)
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if timeout and time.monotonic() - start > timeout:
            os.killpg(process.pid, 9)
            os.wait4(process.pid, 0)
            for path in (log, log + ".rss"):
                os.unlink(path) if os.path.exists(path) else None
            return {"timeout": timeout}
        time.sleep(0.02)
    wall = time.monotonic() - start
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    os.unlink(log) if os.path.exists(log) else None
    if os.waitstatus_to_exitcode(status) != 0:
        os.unlink(log + ".rss") if os.path.exists(log + ".rss") else None
        return {"failed": os.waitstatus_to_exitcode(status), "log": text[-2000:]}
    written = int(text.strip().splitlines()[-1].split()[1])
    with open(log + ".rss") as f:
        rss = int(f.read().split()[-1]) * 1024
    os.unlink(log + ".rss")
    return {"wall": wall, "rss": rss, "written": written, "cpu": usage.ru_utime + usage.ru_stime}


def run(command, prep, cwd):
    """(wall s, peak RSS bytes, bytes written, CPU s) of one run, for sync.py."""
    if prep:
        sh(prep, cwd)
    result = measure(command, cwd)
    if "failed" in result:
        sys.exit("failed (%d): %s\n%s" % (result["failed"], command, result["log"]))
    return result["wall"], result["rss"], result["written"], result["cpu"]


class Tool:
    """One loader: how to load a file into its store, which files it reads,
    and what a store of it is (a file or a directory)."""

    def __init__(self, name, load, files, store, cases=("first", "again", "update"), once=False, note="",
                 pair="sluice"):
        self.name, self.load, self.files, self.store = name, load, files, store
        self.cases, self.once, self.note, self.pair = cases, once, note, pair

    def paths(self, work, case):
        return os.path.join(work, "stores", self.slug() + "." + case), os.path.join(work, "stores", self.slug() + ".base")

    def slug(self):
        return "".join(c if c.isalnum() else "-" for c in self.name.lower())

    def prepare(self, work, case):
        """Makes the store the case starts from; returns its path, or None
        when the first load never finished."""
        store, base = self.paths(work, case)
        remove(store)
        remove(store + "-wal")
        remove(store + "-shm")
        if case != "first":
            if not os.path.exists(base):
                return None
            copy(base, store)
        return store

    def finished_first(self, work):
        store, base = self.paths(work, "first")
        remove(base)
        copy(store, base)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.unlink(path)


def copy(source, target):
    if os.path.isdir(source):
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(source + suffix):
                shutil.copy(source + suffix, target + suffix)


def tools(a, work, venv):
    mapping = lambda name: os.path.join(BENCHMARKS, name)
    python = os.path.join(venv, "bin", "python")
    peer = lambda script: "%s %s" % (python, os.path.join(BENCHMARKS, "peers", script))
    jsonl = {"first": "base.jsonl", "again": "base.jsonl", "update": "base.update.jsonl"}
    found = [
        Tool("sluice", lambda s, f: "%s import --quiet --mapping %s --into %s %s" % (SLUICE, mapping("events.yml"), s, f),
             jsonl, "file"),
        Tool("C baseline", lambda s, f: "%s %s %s %s" % (os.path.join(work, "bin", "load"), "insert" if f == "base.tsv" and not os.path.exists(s) else "upsert", s, f),
             {"first": "base.tsv", "again": "base.tsv", "update": "base.update.tsv"}, "file",
             note="pre-parsed TSV, no JSON parsing"),
    ]
    sluice_on = lambda options: lambda s, f: "%s import --quiet %s --mapping %s --into %s %s" % (
        SLUICE, options, mapping("events.yml"), s, f)
    found += [
        Tool("sluice, --threads 1", sluice_on("--threads 1"), {"first": "base.jsonl"}, "file", cases=("first",),
             note="one parse thread, against sluice's default"),
        Tool("sluice, gzip", sluice_on(""), {"first": "base.jsonl.gz"}, "file", cases=("first",)),
        Tool("sluice, zstd", sluice_on(""), {"first": "base.jsonl.zst"}, "file", cases=("first",)),
    ]
    if not a.no_formats:
        found += [
            Tool("sluice, JSON array", lambda s, f: "%s import --quiet --mapping %s --into %s %s" % (SLUICE, mapping("events-array.yml"), s, f),
                 {"first": "base.json"}, "file", cases=("first",)),
            Tool("sluice, XML", lambda s, f: "%s import --quiet --mapping %s --into %s %s" % (SLUICE, mapping("events-xml.yml"), s, f),
                 {"first": "base.xml"}, "file", cases=("first",)),
        ]
    if a.peers:
        utils = os.path.join(venv, "bin", "sqlite-utils")
        found += [
            Tool("sqlite-utils", lambda s, f: "%s upsert %s Event %s --nl --pk id" % (utils, s, f), jsonl, "file",
                 note="one table; actor and tags as JSON text"),
            Tool("ijson + sqlite3", lambda s, f: "%s %s %s" % (peer("ijson_load.py"), s, f), jsonl, "file"),
            Tool("DuckDB", lambda s, f: "%s %s %s" % (peer("duckdb_load.py"), s, f), jsonl, "file",
                 note="tags as a LIST column, no link table"),
            Tool("DuckDB, gzip", lambda s, f: "%s %s %s" % (peer("duckdb_load.py"), s, f), {"first": "base.jsonl.gz"},
                 "file", cases=("first",), pair="sluice, gzip", note="the same script; read_json decompresses"),
            Tool("DuckDB, zstd", lambda s, f: "%s %s %s" % (peer("duckdb_load.py"), s, f), {"first": "base.jsonl.zst"},
                 "file", cases=("first",), pair="sluice, zstd", note="the same script; read_json decompresses"),
            Tool("dlt → DuckDB", lambda s, f: "%s duckdb %s %s" % (peer("dlt_load.py"), s, f), jsonl, "directory", once=True),
            Tool("dlt → SQLite", lambda s, f: "%s sqlite %s %s" % (peer("dlt_load.py"), s, f), jsonl, "directory", once=True),
        ]
    return found


def setup(a, work):
    """Builds sluice and the C baseline, writes the data, makes the venv."""
    sh("scripts/build.sh --product sluice >/dev/null", ROOT)
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    sh("gcc -O2 -o %s %s -lsqlite3" % (os.path.join(work, "bin", "load"), os.path.join(BENCHMARKS, "baseline", "load.c")))
    data = os.path.join(work, "data", str(a.records))
    if not os.path.exists(os.path.join(data, "base.update.tsv")):
        os.makedirs(data, exist_ok=True)
        print("writing %d events (Benchmarks/events.py) ..." % a.records, file=sys.stderr, flush=True)
        sh("python3 %s dataset %d %s" % (os.path.join(BENCHMARKS, "events.py"), a.records, os.path.join(data, "base")))
    base = os.path.join(data, "base.jsonl")
    if not os.path.exists(base + ".zst"):
        sh("gzip -6 -k -f %s && zstd -q -3 -f %s -o %s.zst" % (base, base, base))
    venv = os.path.join(work, "venv")
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        sh("python3 -m venv %s" % venv)
    packages = ["matplotlib"] + (PEER_PACKAGES if a.peers else [])
    sh("%s -m pip install -q --disable-pip-version-check %s" % (os.path.join(venv, "bin", "python"), " ".join("'%s'" % p for p in packages)))
    shutil.rmtree(os.path.join(work, "stores"), ignore_errors=True)
    os.makedirs(os.path.join(work, "stores"))
    return data, venv


def benchmark(a, work, data, venv):
    results = {tool.name: {"note": tool.note, "pair": tool.pair, "cases": {}} for tool in tools(a, work, venv)}
    for case, title in CASES:
        for round_ in range(a.runs):
            for tool in tools(a, work, venv):
                if case not in tool.cases or (tool.once and round_ > 0):
                    continue
                runs = results[tool.name]["cases"].setdefault(case, [])
                if any("wall" not in r for r in runs):
                    continue
                store = tool.prepare(work, case)
                if store is None:
                    runs.append({"skipped": "the first load did not finish"})
                    continue
                result = measure(tool.load(store, tool.files[case]), data, a.timeout)
                result["round"] = round_
                runs.append(result)
                print("%-20s %-22s %s" % (tool.name, title, describe(result)), file=sys.stderr, flush=True)
                if case == "first" and "wall" in result:
                    tool.finished_first(work)
    return results


def describe(result):
    if "wall" in result:
        return "%.2f s, %.0f MiB, %.0f MB written" % (result["wall"], result["rss"] / 2**20, result["written"] / 1e6)
    if "timeout" in result:
        return "stopped after %d s" % result["timeout"]
    if "skipped" in result:
        return "skipped: " + result["skipped"]
    lines = [l.strip() for l in result["log"].splitlines() if l.strip() and not l.startswith("write_bytes")]
    return "failed (exit %d): %s" % (result["failed"], (lines[-1] if lines else "")[-200:].replace("|", "/"))


def summarise(results):
    """Medians per tool and case, and the ratio to the run of the same round
    of the sluice row it pairs with (the same input form)."""
    for name, tool in results.items():
        sluice = results[tool.get("pair", "sluice")]["cases"]
        tool["summary"] = {}
        for case, runs in tool["cases"].items():
            done = [r for r in runs if "wall" in r]
            if not done or len(done) < len(runs):
                bad = next(r for r in runs if "wall" not in r)
                tool["summary"][case] = {"status": describe(bad)}
                continue
            ratios = []
            for r in done:
                paired = [s for s in sluice.get(case if case in sluice else "first", []) if s.get("round") == r["round"] and "wall" in s]
                if paired:
                    ratios.append(r["wall"] / paired[0]["wall"])
            tool["summary"][case] = {
                "wall": statistics.median(r["wall"] for r in done), "rss": statistics.median(r["rss"] for r in done),
                "written": statistics.median(r["written"] for r in done), "runs": len(done),
                "ratio": statistics.median(ratios) if ratios else None}


def markdown(results, meta):
    lines = ["Events workload, %s records (%s of JSON Lines), %s; %d rounds, medians (tools marked ¹ run once)." % (
        "{:,}".format(meta["records"]), "%.0f MB" % (meta["input_bytes"] / 1e6), meta["machine"], meta["runs"]),
        "Ratio = the tool's wall time / sluice's in the same round, on the same input form (plain, gzip or zstd;"
        " above 1: sluice is faster).", "",
        "| tool | case | wall s | × sluice | peak RSS MiB | written MB |", "|---|---|---|---|---|---|"]
    for name, tool in results.items():
        for case, title in CASES:
            s = tool["summary"].get(case)
            if s is None:
                continue
            label = name + ("¹" if tool["cases"][case] and len(tool["cases"][case]) == 1 and name.startswith("dlt") else "")
            if "status" in s:
                lines.append("| %s | %s | %s | | | |" % (label, title, s["status"]))
            else:
                lines.append("| %s | %s | %.2f | %s | %.0f | %.0f |" % (
                    label, title, s["wall"], "%.2f" % s["ratio"] if s["ratio"] else "", s["rss"] / 2**20, s["written"] / 1e6))
    notes = ["- %s: %s" % (name, tool["note"]) for name, tool in results.items() if tool["note"]]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


PLOT = r'''
import json, sys
import matplotlib
import matplotlib.ticker
import matplotlib.transforms
matplotlib.use("Agg")
import matplotlib.pyplot as plt
results, cases, out = json.load(open(sys.argv[1]))["results"], json.loads(sys.argv[2]), sys.argv[3]
names = list(results)
fig, axes = plt.subplots(1, 2, figsize=(13, 0.45 * len(names) * len(cases) + 1.5))
for axis, key, label in ((axes[0], "wall", "wall time, s (log)"), (axes[1], "rss", "peak RSS, MiB (log)")):
    labels, values, colors = [], [], []
    for c, (case, title) in enumerate(cases):
        for name in names:
            s = results[name]["summary"].get(case)
            if not s:
                continue
            labels.append("%s — %s" % (name, title))
            stopped = "status" in s
            values.append(0 if stopped else s[key] / (2**20 if key == "rss" else 1))
            colors.append("#d62728" if name == "sluice" else "#bbbbbb" if stopped else "C%d" % c)
    y = range(len(labels))
    axis.barh(y, values, color=colors)
    axis.set_yticks(list(y), labels if key == "wall" else [""] * len(labels), fontsize=8)
    axis.invert_yaxis()
    axis.set_xscale("log")
    axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xlabel(label)
    at_left = matplotlib.transforms.blended_transform_factory(axis.transAxes, axis.transData)
    for i, v in enumerate(values):
        if v:
            axis.text(v, i, " %.3g" % v, va="center", fontsize=7)
        else:
            axis.text(0.01, i, "stopped at the timeout", va="center", fontsize=7, transform=at_left)
fig.suptitle("sluice and the loaders a user would pick instead")
fig.tight_layout()
fig.savefig(out + ".png", dpi=110)
fig.savefig(out + ".svg")
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "sluice-bench"))
    ap.add_argument("--out", default=None, help="where results.json, .md, .png and .svg go (default: WORK/results)")
    ap.add_argument("--peers", action="store_true", help="also run the peers, installed by pip into WORK/venv")
    ap.add_argument("--no-formats", action="store_true", help="skip sluice on the JSON array and XML forms")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    ap.add_argument("--postgres", action="store_true", help="then run Benchmarks/postgres.py (sluice into PostgreSQL)")
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    out = os.path.abspath(a.out or os.path.join(work, "results"))
    os.makedirs(out, exist_ok=True)
    data, venv = setup(a, work)
    results = benchmark(a, work, data, venv)
    summarise(results)
    meta = {"records": a.records, "runs": a.runs, "input_bytes": os.path.getsize(os.path.join(data, "base.jsonl")),
            "machine": "%s, %d cores, %s" % (platform.machine(), os.cpu_count(), platform.platform()),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "timeout": a.timeout,
            "sluice": subprocess.run([SLUICE, "--version"], capture_output=True, text=True).stdout.strip()}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    table = markdown(results, meta)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(table)
    subprocess.run([os.path.join(venv, "bin", "python"), "-c", PLOT, os.path.join(out, "results.json"),
                    json.dumps(CASES), os.path.join(out, "results")], check=True)
    print(table)
    print("written: %s/results.{json,md,png,svg}" % out)
    if a.postgres:
        subprocess.run([sys.executable, os.path.join(BENCHMARKS, "postgres.py"), "--records", str(a.records), "--runs", str(a.runs),
                        "--work", work, "--out", out], check=True)


if __name__ == "__main__":
    main()
