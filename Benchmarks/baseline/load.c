/* The hand-written C loader sluice is measured against: what a careful
 * programmer writes for one known input when speed is all that matters.
 *
 * It reads the events workload's pre-parsed rows (PREFIX.tsv from
 * Benchmarks/events.py: no JSON or XML parsing at all), keeps batches of
 * 10,000 rows, sorts each batch by key, and writes each in one transaction
 * with prepared statements into three tables:
 *
 *   Actor(id INTEGER PRIMARY KEY, login, url)        found or created
 *   Event(id INTEGER PRIMARY KEY, ..., actor)        inserted or upserted
 *   Event_tags(Event, Tag, PRIMARY KEY(Event, Tag))  an event's tags replaced
 *
 * WAL journal, synchronous=NORMAL, as sluice runs SQLite.
 *
 *   load insert DB FILE.tsv   a new store (creates the tables)
 *   load upsert DB FILE.tsv   into a store `insert` made
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

enum { BATCH = 10000 };
enum { ID, TYPE, CREATED, PUBLIC, SCORE, RATIO, REPO, LANG, TITLE, BODY, ACTOR_ID, LOGIN, URL, TAGS, FIELDS };

typedef struct {
    char *line;            /* owned; the fields point into it */
    char *field[FIELDS];   /* NULL for \N */
    long long id;
} Row;

static sqlite3 *db;

static void fail(const char *what) {
    fprintf(stderr, "load: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
    exit(1);
}

static void exec(const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(sql);
}

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK) fail(sql);
    return statement;
}

/* Undoes events.py's escapes (\\ \t \n) in place; returns NULL for \N. */
static char *unescape(char *text) {
    if (strcmp(text, "\\N") == 0) return NULL;
    char *in = text, *out = text;
    while (*in) {
        if (*in == '\\' && in[1]) {
            in++;
            *out++ = *in == 't' ? '\t' : *in == 'n' ? '\n' : *in;
            in++;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
    return text;
}

static int split(Row *row) {
    char *cursor = row->line;
    for (int i = 0; i < FIELDS; i++) {
        char *end = strchr(cursor, i == FIELDS - 1 ? '\n' : '\t');
        if (!end && i < FIELDS - 1) return 0;
        if (end) *end = 0;
        row->field[i] = i == TAGS ? cursor : unescape(cursor);
        cursor = end ? end + 1 : cursor + strlen(cursor);
    }
    row->id = strtoll(row->field[ID], NULL, 10);
    return 1;
}

static int by_key(const void *a, const void *b) {
    long long x = ((const Row *)a)->id, y = ((const Row *)b)->id;
    return (x > y) - (x < y);
}

static void bind_text(sqlite3_stmt *statement, int index, const char *text) {
    if (text) sqlite3_bind_text(statement, index, text, -1, SQLITE_STATIC);
    else sqlite3_bind_null(statement, index);
}

static void step(sqlite3_stmt *statement, const char *what) {
    if (sqlite3_step(statement) != SQLITE_DONE) fail(what);
    sqlite3_reset(statement);
}

static sqlite3_stmt *actor_statement, *event_statement, *untag_statement, *tag_statement;

static void write_batch(Row *rows, size_t count, int upsert) {
    qsort(rows, count, sizeof *rows, by_key);
    exec("BEGIN");
    for (size_t r = 0; r < count; r++) {
        char **f = rows[r].field;
        sqlite3_bind_int64(actor_statement, 1, strtoll(f[ACTOR_ID], NULL, 10));
        bind_text(actor_statement, 2, f[LOGIN]);
        bind_text(actor_statement, 3, f[URL]);
        step(actor_statement, "actor");
        sqlite3_bind_int64(event_statement, 1, rows[r].id);
        for (int i = TYPE; i <= BODY; i++) {
            if (!f[i]) sqlite3_bind_null(event_statement, i + 1);
            else if (i == PUBLIC || i == SCORE) sqlite3_bind_int64(event_statement, i + 1, strtoll(f[i], NULL, 10));
            else if (i == RATIO) sqlite3_bind_double(event_statement, i + 1, strtod(f[i], NULL));
            else sqlite3_bind_text(event_statement, i + 1, f[i], -1, SQLITE_STATIC);
        }
        sqlite3_bind_int64(event_statement, BODY + 2, strtoll(f[ACTOR_ID], NULL, 10));
        step(event_statement, "event");
        if (upsert) {
            sqlite3_bind_int64(untag_statement, 1, rows[r].id);
            step(untag_statement, "untag");
        }
        for (char *tag = f[TAGS]; *tag;) {
            char *end = strchr(tag, '\x1f');
            if (end) *end = 0;
            sqlite3_bind_int64(tag_statement, 1, rows[r].id);
            sqlite3_bind_text(tag_statement, 2, unescape(tag), -1, SQLITE_STATIC);
            step(tag_statement, "tag");
            if (!end) break;
            tag = end + 1;
        }
    }
    exec("COMMIT");
    for (size_t r = 0; r < count; r++) free(rows[r].line);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "insert") && strcmp(argv[1], "upsert"))) {
        fprintf(stderr, "usage: load insert|upsert DB FILE.tsv\n");
        return 64;
    }
    int upsert = strcmp(argv[1], "upsert") == 0;
    FILE *input = fopen(argv[3], "r");
    if (!input) fail(argv[3]);
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) fail(argv[2]);
    exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
    if (!upsert)
        exec("CREATE TABLE Actor(id INTEGER PRIMARY KEY, login TEXT, url TEXT);"
             "CREATE TABLE Event(id INTEGER PRIMARY KEY, type TEXT, created_at TEXT, public INTEGER, score INTEGER,"
             " ratio REAL, repo TEXT, lang TEXT, title TEXT, body TEXT, actor INTEGER REFERENCES Actor(id));"
             "CREATE INDEX Event_actor ON Event(actor);"
             "CREATE TABLE Event_tags(Event INTEGER NOT NULL, Tag TEXT NOT NULL, PRIMARY KEY(Event, Tag)) WITHOUT ROWID");
    actor_statement = prepare("INSERT INTO Actor(id, login, url) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING");
    event_statement = prepare(upsert
        ? "INSERT INTO Event VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET type=excluded.type,"
          " created_at=excluded.created_at, public=excluded.public, score=excluded.score, ratio=excluded.ratio,"
          " repo=excluded.repo, lang=excluded.lang, title=excluded.title, body=excluded.body, actor=excluded.actor"
        : "INSERT INTO Event VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    untag_statement = prepare("DELETE FROM Event_tags WHERE Event = ?");
    tag_statement = prepare("INSERT OR IGNORE INTO Event_tags(Event, Tag) VALUES (?, ?)");

    Row *rows = calloc(BATCH, sizeof *rows);
    size_t count = 0, total = 0, capacity = 0;
    char *line = NULL;
    long lineNumber = 0;
    while (getline(&line, &capacity, input) > 0) {
        lineNumber++;
        rows[count].line = strdup(line);
        if (!split(&rows[count])) {
            fprintf(stderr, "load: %s:%ld: not a row of 14 fields\n", argv[3], lineNumber);
            return 65;
        }
        if (++count == BATCH) {
            write_batch(rows, count, upsert);
            total += count;
            count = 0;
        }
    }
    write_batch(rows, count, upsert);
    total += count;
    if (ferror(input)) fail(argv[3]);
    sqlite3_finalize(actor_statement);
    sqlite3_finalize(event_statement);
    sqlite3_finalize(untag_statement);
    sqlite3_finalize(tag_statement);
    if (sqlite3_close(db) != SQLITE_OK) fail("close");
    printf("%zu rows\n", total);
    free(rows);
    free(line);
    return 0;
}
