#!/usr/bin/env python3
"""The events workload of sluice's benchmarks, written for this project.

Each event is a JSON object of about 500 bytes: a unique integer key, in
shuffled order; a type, a date, a boolean, an integer score, a real ratio,
a repository, a nullable language, a title and a nullable body; a nested
actor ({id, login, url}, drawn from a pool of n/20, skewed so that some
actors recur often); and 0 to 5 tags. Every value comes from the record's
number and the seed alone, so a file can be written again identically.

  events.py base N FILE                 N events, JSON Lines
  events.py nextday N FILE [--change C]  the next day's dump of the same N:
                                         1% changed, 0.5% new, 0.5% gone;
                                         with --change, also C, the change
                                         file: the changed and new events,
                                         and {"id": K, "deleted": true} for
                                         each one gone

The key order is a shuffle of the record numbers (one list of N integers in
memory); records are written one at a time.
"""
import json
import random
import sys

SEED = 20261123
TYPES = ["PushEvent", "PushEvent", "PushEvent", "IssuesEvent", "IssueCommentEvent", "PullRequestEvent",
         "WatchEvent", "CreateEvent", "ForkEvent", "ReleaseEvent"]
LANGUAGES = ["Swift", "C", "Python", "Rust", "Go", "TypeScript", "Java", "Kotlin", "Ruby", "Zig"]
TAGS = ["bug", "feature", "docs", "perf", "ci", "api", "db", "json", "xml", "linux", "security",
        "regression", "good first issue", "help wanted", "deps", "beta", "ümlaut", "日本"]
WORDS = ("stream import record batch key sort merge store table index page cache parse event "
         "actor tag release build test fix crash memory limit value column row json xml the of a to "
         "and in for with on by café naïve данные 東京 \"quoted\" back\\slash a<b x&y").split()


def key(number):
    """The event key of record `number`: unique, spread out, above 2^31."""
    return 3_000_000_000 + number * 13 + (number * 7919) % 13


def words(rng, low, high):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def event(number, n, version=0):
    """Record `number` as of `version` (0: the base dump; 1: changed)."""
    rng = random.Random(SEED * 1_000_003 + number)
    actor = int((n // 20 or 1) * rng.random() ** 2)
    login = "user%d" % actor
    record = {
        "id": key(number),
        "type": rng.choice(TYPES),
        "created_at": "2026-%02d-%02dT%02d:%02d:%02dZ" % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                                                          rng.randint(0, 59), rng.randint(0, 59)),
        "public": rng.random() < 0.9,
        "score": rng.randint(-50, 5000),
        "ratio": round(rng.random() * 100, rng.randint(1, 6)),
        "repo": "%s/%s" % (login, rng.choice(WORDS)),
        "lang": rng.choice(LANGUAGES) if rng.random() < 0.8 else None,
        "title": words(rng, 2, 12),
        "body": words(rng, 10, 60) if rng.random() < 0.85 else None,
        "actor": {"id": 1000 + actor, "login": login, "url": "https://example.org/users/" + login},
        "tags": rng.sample(TAGS, rng.randrange(6)),
    }
    if version:
        record["score"] += 1 + number % 97
        record["title"] = words(rng, 2, 12)
        if number % 3 == 0:
            record["tags"] = rng.sample(TAGS, rng.randrange(6))
    return record


def shuffled(numbers, salt):
    numbers = list(numbers)
    random.Random(SEED + salt).shuffle(numbers)
    return numbers


def write(path, items):
    with open(path, "w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[0] not in ("base", "nextday"):
        sys.exit(__doc__)
    kind, n, path = args[0], int(args[1]), args[2]
    if kind == "base":
        write(path, (event(number, n) for number in shuffled(range(n), 0)))
        return
    # Next day: every 200th record gone (0.5%), every 100th (offset 1) changed
    # (1%), and n/200 new records (0.5%) numbered from n on.
    gone = lambda number: number % 200 == 0
    changed = lambda number: number % 100 == 1
    numbers = [number for number in range(n) if not gone(number)] + list(range(n, n + n // 200))
    write(path, (event(number, n, changed(number)) for number in shuffled(numbers, 1)))
    if "--change" in args:
        change = args[args.index("--change") + 1]
        delta = [number for number in range(n) if gone(number) or changed(number)] + list(range(n, n + n // 200))
        write(change, ({"id": key(number), "deleted": True} if number < n and gone(number) else event(number, n, changed(number))
                       for number in shuffled(delta, 2)))


if __name__ == "__main__":
    main()
