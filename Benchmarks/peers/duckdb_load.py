#!/usr/bin/env python3
"""What a DuckDB user writes: read_json over the whole JSON Lines file into a
staging table, then a keyed upsert (INSERT ... ON CONFLICT (id) DO UPDATE).
Actors are found or created in their own table; tags stay a LIST column,
as a columnar engine stores them (no link table). The same script serves a
first load, a re-import and an update file.

  duckdb_load.py DB.duckdb FILE.jsonl
"""
import sys

import duckdb

COLUMNS = ["type", "created_at", "public", "score", "ratio", "repo", "lang", "title", "body", "actor", "tags"]


def main():
    database, path = sys.argv[1:]
    connection = duckdb.connect(database)
    connection.execute("CREATE TABLE IF NOT EXISTS Actor(id BIGINT PRIMARY KEY, login VARCHAR, url VARCHAR)")
    connection.execute("CREATE TABLE IF NOT EXISTS Event(id BIGINT PRIMARY KEY, type VARCHAR, created_at TIMESTAMP, "
                       "public BOOLEAN, score BIGINT, ratio DOUBLE, repo VARCHAR, lang VARCHAR, title VARCHAR, "
                       "body VARCHAR, actor BIGINT, tags VARCHAR[])")
    connection.execute("CREATE TEMP TABLE stage AS SELECT * FROM read_json(?, format='newline_delimited', columns={"
                       "id: 'BIGINT', type: 'VARCHAR', created_at: 'TIMESTAMP', public: 'BOOLEAN', score: 'BIGINT', "
                       "ratio: 'DOUBLE', repo: 'VARCHAR', lang: 'VARCHAR', title: 'VARCHAR', body: 'VARCHAR', "
                       "actor: 'STRUCT(id BIGINT, login VARCHAR, url VARCHAR)', tags: 'VARCHAR[]'})", [path])
    connection.execute("INSERT INTO Actor SELECT DISTINCT ON (actor.id) actor.id, actor.login, actor.url FROM stage "
                       "ON CONFLICT (id) DO NOTHING")
    connection.execute("INSERT INTO Event SELECT id, type, created_at, public, score, ratio, repo, lang, title, body, "
                       "actor.id, tags FROM stage ON CONFLICT (id) DO UPDATE SET "
                       + ", ".join("%s = excluded.%s" % (c, c) for c in COLUMNS))
    connection.close()


if __name__ == "__main__":
    main()
