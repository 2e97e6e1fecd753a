#!/usr/bin/env python3
"""The events workload of sluice's benchmarks, written for this project.

Each event is a JSON object of about 500 bytes: a unique integer key, in
shuffled order; a type, a date, a boolean, an integer score, a real ratio,
a repository, a nullable language, a title and a nullable body; a nested
actor ({id, login, url}, drawn from a pool of n/20, skewed so that some
actors recur often); and 0 to 5 tags. Every value comes from the record's
number and the seed alone, so a file can be written again identically.

  events.py base N FILE [FORM]          N events, JSON Lines (or XML, below)
  events.py dataset N PREFIX            N events as PREFIX.jsonl, .json (one
                                         array), .xml and .tsv (the C
                                         baseline's pre-parsed rows), and
                                         the update file PREFIX.update.jsonl
                                         and .tsv: N/10 changed known events
                                         and N/10 new ones
  events.py nextday N FILE [--change C]  the next day's dump of the same N:
                                         1% changed, 0.5% new, 0.5% gone;
                                         with --change, also C, the change
                                         file: the changed and new events,
                                         and {"id": K, "deleted": true} for
                                         each one gone; every unchanged
                                         record keeps its bytes of the
                                         base file [FORM]
  events.py shuffle IN OUT               IN's records, each byte for byte,
                                         in another (seeded) order: the
                                         offsets of its lines in memory (16
                                         bytes a record), one record read
                                         at a time

FORM, for base and nextday (the change file included):
  --xml                   one <event> a line inside <events> (as dataset's
                          PREFIX.xml; mapping events-xml.yml), a gone event
                          as <event id="K" deleted="true"/> in the change file
  --document              one JSON document: an element of its "events"
                          array a line (a comma after every element but the
                          last), between DOCUMENT_HEADER and DOCUMENT_FOOTER
                          (records at $.events[*])
  --field-bytes B [--large-fields K]
                          large records: K (1-3, default 3) string fields of
                          each event (body, title, repo) padded to B characters

The key order is a shuffle of the record numbers (one list of N integers in
memory); records are written one at a time.
"""
import array
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


def event(number, n, version=0, pad=None):
    """Record `number` as of `version` (0: the base dump; 1: changed); with
    `pad` = (B, K), its first K of body, title and repo are B characters
    long."""
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
    if pad:
        size, count = pad
        # A block of ASCII words (a byte a character, nothing to escape in
        # JSON) repeated after the field's own value, so that a changed
        # title changes the padded field.
        block = " ".join(rng.choice(PLAIN_WORDS) for _ in range(400))
        for name in PADDED[:count]:
            start = "%s " % (record[name] or "")
            record[name] = (start + block * (size // len(block) + 1))[:size]
    return record


PADDED = ["body", "title", "repo"]
PLAIN_WORDS = [word for word in WORDS if word.isascii() and word.isalpha()]


def gone(number):
    """Whether record `number` of day 0 is gone the next day (0.5%)."""
    return number % 200 == 0


def changed(number):
    """Whether record `number` of day 0 is changed the next day (1%)."""
    return number % 100 == 1


def new_records(n):
    """The next day's new records (0.5%, at least one), numbered from n on."""
    return range(n, n + max(1, n // 200))


def next_day_diff(n):
    """(new, changed, gone): the events the next day inserts, updates and deletes."""
    return (len(new_records(n)), sum(1 for number in range(1, n, 100)), sum(1 for number in range(0, n, 200)))


def shuffled(numbers, salt):
    numbers = list(numbers)
    random.Random(SEED + salt).shuffle(numbers)
    return numbers


XML_HEADER = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events>\n"
XML_FOOTER = "</events>\n"
DOCUMENT_HEADER = '{"source": "events.py", "events": [\n'
DOCUMENT_FOOTER = "]}\n"


def write(path, items, xml=False, document=False):
    """JSON Lines, with `xml` one <event> a line between XML_HEADER and
    XML_FOOTER (a {"id": K, "deleted": true} item as a deleted <event>), or
    with `document` one element a line of a JSON document's array."""
    with open(path, "w", encoding="utf-8") as out:
        if document:
            write_document(out, (json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in items))
            return
        out.write(XML_HEADER if xml else "")
        for item in items:
            if not xml:
                out.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
            elif item.get("deleted"):
                out.write('<event id="%d" deleted="true"/>\n' % item["id"])
            else:
                out.write(as_xml(item))
        out.write(XML_FOOTER if xml else "")


def write_document(out, elements):
    """`elements` (text) as the array of a JSON document, one a line."""
    out.write(DOCUMENT_HEADER)
    for index, element in enumerate(elements):
        out.write((",\n" if index else "") + element)
    out.write("\n" + DOCUMENT_FOOTER)


def shuffle_file(source, target, salt=4):
    """Writes `source`'s records to `target`, each byte for byte, in a seeded
    shuffle of their order: a record is a line (in XML, one between the
    header's two lines and the footer's; in a JSON document, one between
    its header's line and its footer's, less the comma after it). Holds the
    lines' offsets and their order (16 bytes a record) and one record at a
    time."""
    starts = array.array("Q")
    with open(source, "rb") as f:
        xml = f.read(5) == b"<?xml"
        f.seek(0)
        if f.readline() == DOCUMENT_HEADER.encode():
            return shuffle_document(source, target, salt)
        f.seek(0)
        offset = 0
        for line in f:
            starts.append(offset)
            offset += len(line)
    starts.append(offset)
    first, last = (2, len(starts) - 2) if xml else (0, len(starts) - 1)
    order = array.array("Q", range(first, last))
    random.Random(SEED + salt).shuffle(order)
    with open(source, "rb") as f, open(target, "wb") as out:
        def copy(line):
            f.seek(starts[line])
            out.write(f.read(starts[line + 1] - starts[line]))
        for line in range(first):
            copy(line)
        for line in order:
            copy(line)
        for line in range(last, len(starts) - 1):
            copy(line)


def shuffle_document(source, target, salt):
    """`shuffle_file` of a JSON document (`write_document`): its elements,
    each byte for byte, in a seeded shuffle of their order."""
    starts = array.array("Q")
    with open(source, "rb") as f:
        offset = len(f.readline())
        for line in f:
            starts.append(offset)
            offset += len(line)
    order = array.array("Q", range(len(starts) - 1))
    random.Random(SEED + salt).shuffle(order)
    with open(source, "rb") as f, open(target, "w", encoding="utf-8") as out:
        def element(line):
            f.seek(starts[line])
            return f.read(starts[line + 1] - starts[line]).decode().rstrip("\n").rstrip(",")
        write_document(out, (element(line) for line in order))


def xml_text(value):
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attribute(value):
    return xml_text(value).replace('"', "&quot;")


def as_xml(record):
    """One <event>: scalars as attributes, the actor as an empty element,
    the body and each tag as text elements."""
    actor = record["actor"]
    scalars = "".join(' %s="%s"' % (name, xml_attribute(value if isinstance(value, str) else json.dumps(value)))
                      for name, value in record.items()
                      if name not in ("actor", "tags", "body") and value is not None)
    children = ['<actor id="%d" login="%s" url="%s"/>' % (actor["id"], xml_attribute(actor["login"]),
                                                          xml_attribute(actor["url"]))]
    if record["body"] is not None:
        children.append("<body>%s</body>" % xml_text(record["body"]))
    children += ["<tag>%s</tag>" % xml_text(tag) for tag in record["tags"]]
    return "<event%s>%s</event>\n" % (scalars, "".join(children))


def tsv_field(value):
    """NULL as \\N; backslash, tab and newline escaped with a backslash."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


TSV_FIELDS = ["id", "type", "created_at", "public", "score", "ratio", "repo", "lang", "title", "body"]


def as_tsv(record):
    """The C baseline's row: the ten scalars, the actor's id, login and url,
    then the tags joined by 0x1F."""
    actor = record["actor"]
    fields = [record[name] for name in TSV_FIELDS] + [actor["id"], actor["login"], actor["url"]]
    return "\t".join(tsv_field(field) for field in fields) + "\t" + "\x1f".join(map(tsv_field, record["tags"])) + "\n"


def write_dataset(n, prefix):
    """PREFIX.jsonl/.json/.xml/.tsv of the base dump and PREFIX.update.jsonl/.tsv."""
    outputs = {kind: open("%s.%s" % (prefix, kind), "w", encoding="utf-8") for kind in ("jsonl", "json", "xml", "tsv")}
    outputs["json"].write("[\n")
    outputs["xml"].write(XML_HEADER)
    for index, number in enumerate(shuffled(range(n), 0)):
        record = event(number, n)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        outputs["jsonl"].write(line + "\n")
        outputs["json"].write(("," if index else "") + line + "\n")
        outputs["xml"].write(as_xml(record))
        outputs["tsv"].write(as_tsv(record))
    outputs["json"].write("]\n")
    outputs["xml"].write(XML_FOOTER)
    for output in outputs.values():
        output.close()
    # The update file: every 10th known event changed, and n/10 new ones.
    numbers = shuffled([number for number in range(n) if number % 10 == 3] + list(range(n, n + n // 10)), 3)
    with open(prefix + ".update.jsonl", "w", encoding="utf-8") as jsonl, open(prefix + ".update.tsv", "w", encoding="utf-8") as tsv:
        for number in numbers:
            record = event(number, n, 1 if number < n else 0)
            jsonl.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            tsv.write(as_tsv(record))


def form(args):
    """(xml, document, pad) from the FORM options of base and nextday."""
    option = lambda name, default: int(args[args.index(name) + 1]) if name in args else default
    size = option("--field-bytes", 0)
    return "--xml" in args, "--document" in args, (size, option("--large-fields", 3)) if size else None


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[0] not in ("base", "nextday", "dataset", "shuffle"):
        sys.exit(__doc__)
    if args[0] == "shuffle":
        shuffle_file(args[1], args[2])
        return
    kind, n, path = args[0], int(args[1]), args[2]
    xml, document, pad = form(args)
    if kind == "base":
        write(path, (event(number, n, pad=pad) for number in shuffled(range(n), 0)), xml, document)
        return
    if kind == "dataset":
        write_dataset(n, path)
        return
    # Next day: every 200th record gone (0.5%), every 100th (offset 1) changed
    # (1%), and n/200 new records (0.5%) numbered from n on.
    numbers = [number for number in range(n) if not gone(number)] + list(new_records(n))
    write(path, (event(number, n, changed(number), pad) for number in shuffled(numbers, 1)), xml, document)
    if "--change" in args:
        change = args[args.index("--change") + 1]
        delta = [number for number in range(n) if gone(number) or changed(number)] + list(new_records(n))
        write(change, ({"id": key(number), "deleted": True} if number < n and gone(number) else event(number, n, changed(number), pad)
                       for number in shuffled(delta, 2)), xml, document)


if __name__ == "__main__":
    main()
