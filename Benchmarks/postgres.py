#!/usr/bin/env python3
"""sluice into PostgreSQL on the events workload, beside the reference a
PostgreSQL user would write by hand, and beside sluice into SQLite.

  Benchmarks/postgres.py [--records 200000] [--runs 3] [--work DIR] [--out DIR]

(also run by `Benchmarks/compare.py --postgres`). It starts a server of its
own: initdb into WORK/postgres (as the postgres user when run as root),
listening on a Unix socket there only, default settings (fsync on), stopped
at the end. Cases, each on a new database (the second and third start from
a copy of the first load's):
  - first load, the unchanged file again, the update file (N/10 changed,
    N/10 new) for sluice, for the reference, and for sluice into SQLite;
  - four sluice processes at once, each importing a quarter of the file's
    key range (disjoint keys, shared actors and tags), against one of the
    whole.
The reference is psql: `\\copy` of the JSON Lines into a jsonb staging
table, then one `INSERT … SELECT … ON CONFLICT (key) DO UPDATE … WHERE …
IS DISTINCT FROM` per table and the same link-table diff sluice makes, in
one transaction. After the unchanged file, `n_tup_upd` of
pg_stat_user_tables says how many row versions each tool wrote.
"""
import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (measure, setup of the data and of sluice)

REFERENCE = r"""
CREATE TABLE IF NOT EXISTS "Event" (id bigint PRIMARY KEY, type text, created_at timestamptz, public boolean, score bigint,
  ratio double precision, repo text, lang text, title text, body text, actor bigint);
CREATE INDEX IF NOT EXISTS event_actor ON "Event" (actor);
CREATE TABLE IF NOT EXISTS "Actor" (id bigint PRIMARY KEY, login text, url text);
CREATE TABLE IF NOT EXISTS "Tag" (name text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS "Event_tags" ("Event_id" bigint NOT NULL, "Tag_name" text NOT NULL, position bigint NOT NULL,
  PRIMARY KEY ("Event_id", "Tag_name"));
CREATE INDEX IF NOT EXISTS event_tags_tag ON "Event_tags" ("Tag_name");
BEGIN;
CREATE TEMP TABLE staging (doc jsonb) ON COMMIT DROP;
\copy staging (doc) FROM '%(file)s' WITH (FORMAT csv, QUOTE e'\x01', DELIMITER e'\x02')
INSERT INTO "Actor" AS t
  SELECT DISTINCT ON (1) (doc->'actor'->>'id')::bigint, doc->'actor'->>'login', doc->'actor'->>'url' FROM staging
  WHERE doc->'actor' IS NOT NULL ORDER BY 1
  ON CONFLICT (id) DO UPDATE SET login = excluded.login, url = excluded.url
  WHERE (t.login, t.url) IS DISTINCT FROM (excluded.login, excluded.url);
INSERT INTO "Event" AS t
  SELECT DISTINCT ON (1) (doc->>'id')::bigint, doc->>'type', (doc->>'created_at')::timestamptz, (doc->>'public')::boolean,
    (doc->>'score')::bigint, (doc->>'ratio')::double precision, doc->>'repo', doc->>'lang', doc->>'title', doc->>'body',
    (doc->'actor'->>'id')::bigint
  FROM staging ORDER BY 1
  ON CONFLICT (id) DO UPDATE SET type = excluded.type, created_at = excluded.created_at, public = excluded.public,
    score = excluded.score, ratio = excluded.ratio, repo = excluded.repo, lang = excluded.lang, title = excluded.title,
    body = excluded.body, actor = excluded.actor
  WHERE (t.type, t.created_at, t.public, t.score, t.ratio, t.repo, t.lang, t.title, t.body, t.actor)
    IS DISTINCT FROM (excluded.type, excluded.created_at, excluded.public, excluded.score, excluded.ratio, excluded.repo,
    excluded.lang, excluded.title, excluded.body, excluded.actor);
CREATE TEMP TABLE links ON COMMIT DROP AS
  SELECT DISTINCT ON (1, 2) (doc->>'id')::bigint AS e, tag.value AS name, tag.ordinality - 1 AS position
  FROM staging, jsonb_array_elements_text(doc->'tags') WITH ORDINALITY AS tag ORDER BY 1, 2, 3;
INSERT INTO "Tag" SELECT DISTINCT name FROM links ORDER BY 1 ON CONFLICT DO NOTHING;
CREATE TEMP TABLE events ON COMMIT DROP AS SELECT DISTINCT (doc->>'id')::bigint AS e FROM staging;
WITH stored AS MATERIALIZED (SELECT l."Event_id", l."Tag_name", l.position FROM "Event_tags" l JOIN events ON l."Event_id" = events.e),
     changed AS (SELECT DISTINCT "Event_id" FROM ((SELECT * FROM stored EXCEPT SELECT * FROM links)
                 UNION ALL (SELECT * FROM links EXCEPT SELECT * FROM stored)) d)
DELETE FROM "Event_tags" l USING changed c WHERE l."Event_id" = c."Event_id";
INSERT INTO "Event_tags" SELECT n.e, n.name, n.position FROM links n
  WHERE NOT EXISTS (SELECT 1 FROM "Event_tags" l WHERE l."Event_id" = n.e) ORDER BY 1, 2 ON CONFLICT DO NOTHING;
COMMIT;
"""


def copy_of(template, server_version_num):
    """The clause of a CREATE DATABASE that copies database `template`, its
    files written and synced by the server before the statement returns, as
    a benchmark's SQLite copy is synced: PostgreSQL 15's default copy
    (WAL_LOG) writes the whole database through the shared buffers and the
    WAL, whose checkpoints then run during the steps measured on the copy
    and bill them for it (Benchmarks/sync.py, (d) at 2,000,000 events:
    6.41 and 6.44 s of wall after such a copy, 4.57 and 4.60 s after
    FILE_COPY; before 15, FILE_COPY is the only way)."""
    return " TEMPLATE %s%s" % (template, " STRATEGY FILE_COPY" if server_version_num >= 150000 else "")


class Server:
    """A PostgreSQL server in `directory`, on a Unix socket there only."""

    def __init__(self, directory):
        self.directory = directory
        candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
        self.bin = os.environ.get("SLUICE_PG_BIN") or (candidates[-1] if candidates else os.path.dirname(shutil.which("initdb") or "/"))
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        if self.as_user:
            shutil.chown(directory, "postgres")
        data = os.path.join(directory, "data")
        self.call([os.path.join(self.bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"])
        self.call([os.path.join(self.bin, "pg_ctl"), "-D", data, "-l", os.path.join(directory, "log"), "-w", "start",
                   "-o", "-k %s -c listen_addresses='' -p 5432" % directory])
        self.databases = 0

    def call(self, command):
        subprocess.run(self.as_user + command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.call([os.path.join(self.bin, "pg_ctl"), "-D", os.path.join(self.directory, "data"), "-m", "fast", "-w", "stop"])

    def conninfo(self, database="postgres"):
        return "host=%s port=5432 user=postgres dbname=%s" % (self.directory, database)

    def sql(self, statement, database="postgres"):
        return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", self.conninfo(database), "-c", statement],
                              check=True, capture_output=True, text=True).stdout.strip()

    def database(self, template=None):
        self.databases += 1
        name = "bench_%d" % self.databases
        self.sql("CREATE DATABASE %s%s" % (name, copy_of(template, int(self.sql("SHOW server_version_num")))
                                            if template else ""))
        return name

    def drop(self, name):
        self.sql("DROP DATABASE IF EXISTS %s" % name)

    def row_versions(self, database):
        """Updates and inserts counted in the statistics of `database`'s
        tables (reported when each server process ends)."""
        time.sleep(1.5)
        return self.sql("SELECT coalesce(sum(n_tup_upd), 0) || ' ' || coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables "
                        "WHERE relname NOT LIKE '\\_sluice\\_%'", database)


def tools(server, work, data):
    mapping = os.path.join(compare.BENCHMARKS, "events.yml")
    script = os.path.join(work, "reference.sql")

    def reference(database, file):
        with open(script, "w") as f:
            f.write(REFERENCE % {"file": os.path.join(data, file)})
        return "psql -X -q -v ON_ERROR_STOP=1 '%s' -f %s" % (server.conninfo(database), script)

    return [
        ("sluice → PostgreSQL", lambda database, file: "%s import --quiet --mapping %s --into '%s' %s" % (
            compare.SLUICE, mapping, server.conninfo(database), file)),
        ("psql \\copy + ON CONFLICT", reference),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "sluice-bench"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args()
    a.peers, a.no_formats = False, True
    work = os.path.abspath(a.work)
    out = os.path.abspath(a.out or os.path.join(work, "results"))
    os.makedirs(out, exist_ok=True)
    data, _ = compare.setup(a, work)
    server = Server(os.path.join(work, "postgres"))
    files = {"first": "base.jsonl", "again": "base.jsonl", "update": "base.update.jsonl"}
    # Quarters of the key range (as dumps split by time or id range are),
    # each in the file's order.
    quarters = [os.path.join(data, "range-quarter%d.jsonl" % q) for q in range(4)]
    if not all(os.path.exists(q) for q in quarters):
        with open(os.path.join(data, "base.jsonl")) as f:
            ids = sorted(int(json.loads(line)["id"]) for line in f)
        bounds = [ids[len(ids) * q // 4] for q in range(1, 4)]
        outputs = [open(q, "w") for q in quarters]
        with open(os.path.join(data, "base.jsonl")) as f:
            for line in f:
                outputs[sum(int(json.loads(line)["id"]) >= b for b in bounds)].write(line)
        for o in outputs:
            o.close()
    results = {}
    try:
        for round_ in range(a.runs):
            for name, load in tools(server, work, data):
                base = server.database()
                for case, title in compare.CASES:
                    database = base if case == "first" else server.database(template=base)
                    result = compare.measure(load(database, files[case]), data, a.timeout)
                    if "wall" in result and case != "update":
                        result["versions"] = server.row_versions(database)
                    results.setdefault(name, {}).setdefault(case, []).append(result)
                    print("%-26s %-22s %s %s" % (name, title, compare.describe(result), result.get("versions", "")), file=sys.stderr, flush=True)
                    if database != base:
                        server.drop(database)
                server.drop(base)
            # sluice into SQLite, the same cases, same round.
            store = os.path.join(work, "stores", "pg-compare.sqlite")
            for case, title in compare.CASES:
                if case == "first":
                    for suffix in ("", "-wal", "-shm"):
                        compare.remove(store + suffix)
                else:
                    for suffix in ("", "-wal", "-shm"):
                        compare.remove(store + "." + case + suffix)
                    compare.copy(store, store + "." + case)
                target = store if case == "first" else store + "." + case
                result = compare.measure("%s import --quiet --mapping %s --into %s %s" % (
                    compare.SLUICE, os.path.join(compare.BENCHMARKS, "events.yml"), target, files[case]), data, a.timeout)
                results.setdefault("sluice → SQLite", {}).setdefault(case, []).append(result)
                print("%-26s %-22s %s" % ("sluice → SQLite", title, compare.describe(result)), file=sys.stderr, flush=True)
            # Four importers of disjoint quarters at once.
            database = server.database()
            start = time.monotonic()
            processes = [subprocess.Popen([compare.SLUICE, "import", "--quiet", "--mapping", os.path.join(compare.BENCHMARKS, "events.yml"),
                                           "--into", server.conninfo(database), q], cwd=data) for q in quarters]
            codes = [p.wait() for p in processes]
            wall = time.monotonic() - start
            rows = server.sql('SELECT count(*) FROM "Event"', database)
            results.setdefault("4 × sluice → PostgreSQL (quarters at once)", {}).setdefault("first", []).append(
                {"wall": wall, "codes": codes, "rows": int(rows)} if not any(codes) else {"failed": max(codes), "log": ""})
            print("%-26s %-22s %.2f s, exit %s, %s events" % ("4 × sluice → PostgreSQL", "quarters at once", wall, codes, rows), file=sys.stderr, flush=True)
            server.drop(database)
    finally:
        server.stop()
    table = markdown(results, a, data)
    with open(os.path.join(out, "postgres.json"), "w") as f:
        json.dump({"records": a.records, "runs": a.runs, "machine": "%s, %d cores" % (platform.machine(), os.cpu_count()),
                   "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "results": results}, f, indent=1)
    with open(os.path.join(out, "postgres.md"), "w") as f:
        f.write(table)
    print(table)


def markdown(results, a, data):
    size = os.path.getsize(os.path.join(data, "base.jsonl"))
    lines = ["Events workload into PostgreSQL, {:,} records ({:.0f} MB of JSON Lines), {} rounds, medians; "
             "ratio = wall time / sluice → PostgreSQL's in the same round.".format(a.records, size / 1e6, a.runs), "",
             "| tool | case | wall s | × sluice → PostgreSQL | client peak RSS MiB | row versions written (upd / ins) |",
             "|---|---|---|---|---|---|"]
    own = results.get("sluice → PostgreSQL", {})
    for name, cases in results.items():
        for case, title in compare.CASES:
            runs = cases.get(case)
            if not runs:
                continue
            done = [r for r in runs if "wall" in r]
            if len(done) < len(runs):
                lines.append("| %s | %s | %s | | | |" % (name, title, compare.describe(next(r for r in runs if "wall" not in r))))
                continue
            paired = own.get(case, [])
            ratios = [r["wall"] / p["wall"] for r, p in zip(done, paired) if "wall" in p]
            rss = statistics.median(r["rss"] for r in done) / 2**20 if all("rss" in r for r in done) else None
            lines.append("| %s | %s | %.2f | %s | %s | %s |" % (
                name, "quarters at once" if "quarters" in name else title, statistics.median(r["wall"] for r in done),
                "%.2f" % statistics.median(ratios) if ratios else "", "%.0f" % rss if rss else "",
                " / ".join(done[-1]["versions"].split()) if "versions" in done[-1] else ""))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
