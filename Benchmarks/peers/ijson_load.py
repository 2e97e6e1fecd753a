#!/usr/bin/env python3
"""The loader a Python user writes: ijson (its C backend) streaming the JSON
Lines file, sqlite3 with executemany in transactions of 10,000 events, the
same three tables as Benchmarks/baseline/load.c. Every event is upserted by
id, actors found or created, an event's tags replaced, so the same script
serves a first load, a re-import and an update file.

  ijson_load.py DB FILE.jsonl
"""
import sqlite3
import sys

import ijson

BATCH = 10_000
COLUMNS = ["id", "type", "created_at", "public", "score", "ratio", "repo", "lang", "title", "body"]


def write(connection, events):
    with connection:
        connection.executemany("INSERT INTO Actor VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING",
                               [(e["actor"]["id"], e["actor"]["login"], e["actor"]["url"]) for e in events])
        connection.executemany(
            "INSERT INTO Event VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
            + ", ".join("%s=excluded.%s" % (c, c) for c in COLUMNS[1:] + ["actor"]),
            [tuple(float(e[c]) if c == "ratio" else e[c] for c in COLUMNS) + (e["actor"]["id"],) for e in events])
        connection.executemany("DELETE FROM Event_tags WHERE Event = ?", [(e["id"],) for e in events])
        connection.executemany("INSERT OR IGNORE INTO Event_tags VALUES (?, ?)",
                               [(e["id"], tag) for e in events for tag in e["tags"]])


def main():
    database, path = sys.argv[1:]
    connection = sqlite3.connect(database)
    connection.executescript("""
        PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
        CREATE TABLE IF NOT EXISTS Actor(id INTEGER PRIMARY KEY, login TEXT, url TEXT);
        CREATE TABLE IF NOT EXISTS Event(id INTEGER PRIMARY KEY, type TEXT, created_at TEXT, public INTEGER,
            score INTEGER, ratio REAL, repo TEXT, lang TEXT, title TEXT, body TEXT, actor INTEGER REFERENCES Actor(id));
        CREATE INDEX IF NOT EXISTS Event_actor ON Event(actor);
        CREATE TABLE IF NOT EXISTS Event_tags(Event INTEGER NOT NULL, Tag TEXT NOT NULL,
            PRIMARY KEY(Event, Tag)) WITHOUT ROWID;
    """)
    batch = []
    with open(path, "rb") as stream:
        for event in ijson.items(stream, "", multiple_values=True):
            batch.append(event)
            if len(batch) == BATCH:
                write(connection, batch)
                batch = []
    write(connection, batch)
    connection.close()


if __name__ == "__main__":
    main()
