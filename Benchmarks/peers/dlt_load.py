#!/usr/bin/env python3
"""What a dlt user writes: one resource over the JSON Lines file with
primary_key="id" and write_disposition="merge"; dlt flattens the actor into
columns and the tags into a child table, and merges by key. The pipeline's
state lives beside the store, so a fresh store means a fresh directory.

  dlt_load.py duckdb|sqlite DIR FILE.jsonl
"""
import json
import os
import sys

import dlt


def main():
    destination, directory, path = sys.argv[1:]
    os.makedirs(directory, exist_ok=True)
    # Not named like the dataset: DuckDB cannot tell a catalog "events" from a schema "events".
    store = os.path.abspath(os.path.join(directory, "store." + ("duckdb" if destination == "duckdb" else "sqlite")))
    target = (dlt.destinations.duckdb(store) if destination == "duckdb"
              else dlt.destinations.sqlalchemy(credentials="sqlite:///" + store))

    @dlt.resource(name="event", primary_key="id", write_disposition="merge")
    def events():
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)

    pipeline = dlt.pipeline(pipeline_name="events", destination=target, dataset_name="events",
                            pipelines_dir=os.path.join(os.path.abspath(directory), "pipelines"))
    pipeline.run(events())


if __name__ == "__main__":
    main()
