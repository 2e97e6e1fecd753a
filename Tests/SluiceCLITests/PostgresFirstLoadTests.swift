import Foundation
import SluiceTestSupport
import Testing

/// The first load of PostgreSQL tables that are empty when the run meets
/// them: their batches are copied straight into the tables. It gives the
/// rows and statistics of the staged merge, which tables holding a row
/// still take; a kill during it, resumed or run again, ends in the
/// uninterrupted database.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresFirstLoadTests {
    /// Events with an actor (a nested entity whose occurrences differ) and
    /// tags (links with stubs); `note` only on some, `score` absent on the
    /// repeats: a batch's rows mention different columns.
    let mapping = TestPaths.file(
        "first-load.yml",
        """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: {type: integer, default: "0"}, note: string, at: date}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string}
          Tag:
            key: name
            attributes: {name: string}
        """)

    /// `count` events in shuffled order, every seventh key repeated later
    /// with another kind, no score and other tags.
    func events(_ count: Int, name: String) -> String {
        var generator = SplitMix(seed: 11)
        let first = (1...count).shuffled(using: &generator).map { id in
            let note = id % 5 == 0 ? #", "note": "n\#(id)""# : ""
            let fraction = ["", ".5", ".123456", ".02"][id % 4]
            let at =
                "19\(70 + id % 30)-0\(id % 9 + 1)-1\(id % 10)T0\(id % 10):\(10 + id % 50):0\(id % 10)\(fraction)+02:00"
            return #"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(id * 3)\#(note), "at": "\#(at)", "#
                + #""actor": {"id": \#(id % 40), "login": "a\#(id % 40)-\#(id % 3)"}, "#
                + #""tags": ["t\#(id % 5)", "u\#(id % 3)"\#(id % 4 == 0 ? #", "t\#(id % 5)""# : "")]}"#
        }
        let repeats = stride(from: 7, through: count, by: 7).map { id in
            #"{"id": \#(id), "kind": "again", "actor": {"id": \#(id % 40)}, "tags": ["r\#(id % 2)"]}"#
        }
        return TestPaths.file(name, (first + repeats).joined(separator: "\n") + "\n")
    }

    /// The mapped tables, without the sentinel rows of ``sentinel``.
    func dump(_ database: String) -> [[[String?]]] {
        let reader = PostgresReader(database)
        return [
            "SELECT * FROM \"Event\" WHERE id >= 0 ORDER BY 1",
            "SELECT * FROM \"Actor\" WHERE id >= 0 ORDER BY 1",
            "SELECT * FROM \"Tag\" WHERE name <> 'sentinel' ORDER BY 1",
            "SELECT * FROM \"Event_tags\" WHERE \"Event_id\" >= 0 ORDER BY 1, 2",
        ].map { reader.rows($0) }
    }

    /// One record whose rows stay apart from the events' (negative keys,
    /// its own tag): a run of it makes every table and puts a row in each.
    var sentinel: String {
        TestPaths.file(
            "sentinel.jsonl",
            #"{"id": -1, "kind": "s", "actor": {"id": -1, "login": "s"}, "tags": ["sentinel"]}"# + "\n")
    }

    /// Logs the statement that inserts into `tables` (its first 18
    /// characters) in a table `load_log`, by a statement trigger on each.
    func logInserts(_ database: String, _ tables: [String]) {
        var sql = [
            "CREATE TABLE load_log (tbl text, query text)",
            "CREATE FUNCTION log_load() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "INSERT INTO load_log VALUES (TG_TABLE_NAME, left(current_query(), 18)); RETURN NULL; END $$",
        ]
        for table in tables {
            sql.append(
                "CREATE TRIGGER log_load AFTER INSERT ON \"\(table)\" FOR EACH STATEMENT EXECUTE FUNCTION log_load()")
        }
        let reader = PostgresReader(database)
        for statement in sql {
            let error = reader.rows(statement).first?.first ?? nil
            #expect(error == nil, "\(statement)")
        }
    }

    /// The statements that inserted into `table`, as ``logInserts(_:_:)`` logged them.
    func inserts(_ database: String, _ table: String) -> Set<String> {
        Set(PostgresReader(database).rows("SELECT query FROM load_log WHERE tbl = '\(table)'").map { $0[0] ?? "" })
    }

    /// The statistics of `--stats-json`, without the seconds.
    func statistics(_ path: String) throws -> NSDictionary {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        object.removeValue(forKey: "seconds")
        return object as NSDictionary
    }

    /// Two databases whose tables the sentinel made: one emptied again, one
    /// holding its rows. The same import into each: the empty tables are
    /// loaded by `COPY`s into them, those holding a row by the staged merge,
    /// and both end with the same rows (the sentinel's aside) and report the
    /// same statistics.
    @Test func copiedStraightInOnlyWhenEmptyWithTheRowsAndStatisticsOfTheMerge() throws {
        let server = try PostgresTestServer.require()
        let input = events(6_000, name: "first-load.jsonl")
        let directory = TestPaths.temporaryDirectory()
        var results: [(rows: [[[String?]]], statistics: NSDictionary)] = []
        for emptied in [true, false] {
            let database = try server.newDatabase()
            let made = try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, sentinel])
            #expect(made.status == 0, "\(made.stderr)")
            if emptied {
                let reader = PostgresReader(database)
                for table in ["Event_tags", "Event", "Actor", "Tag"] { _ = reader.rows("DELETE FROM \"\(table)\"") }
            }
            logInserts(database, ["Event", "Actor", "Event_tags"])
            let stats = directory.appendingPathComponent("stats-\(emptied).json").path
            let run = try runCommand(
                sluice,
                [
                    "import", "--mapping", mapping, "--into", database, "--batch-rows", "500", "--stats-json", stats,
                    input,
                ])
            #expect(run.status == 0, "\(run.stderr)")
            for table in ["Event", "Actor", "Event_tags"] {
                let statements = inserts(database, table)
                if emptied {
                    #expect(
                        !statements.isEmpty && statements.allSatisfy { $0.hasPrefix("COPY \"\(table)\"") },
                        "\(table): \(statements)")
                } else {
                    #expect(
                        !statements.isEmpty && !statements.contains { $0.hasPrefix("COPY") }, "\(table): \(statements)")
                }
            }
            results.append((dump(database), try statistics(stats)))
        }
        #expect(results[0].rows[0].count == 6_000)
        #expect(results[0].rows[1].count == 40)
        #expect(results[0].rows[3].count > 6_000)
        #expect(results[0].rows == results[1].rows)
        #expect(results[0].statistics == results[1].statistics)
    }

    /// A first load killed while it copies events, or links, into their
    /// table, then resumed or run again without `--resume`: the database an
    /// uninterrupted run gives, and the last run of the ledger completed.
    @Test(arguments: [("Event", true), ("Event_tags", false)])
    func aKillDuringTheFirstLoadEndsInTheUninterruptedDatabase(table: String, resume: Bool) throws {
        let server = try PostgresTestServer.require()
        let input = events(20_000, name: "first-load-kill.jsonl")
        let load = ["import", "--mapping", mapping, "--batch-rows", "1000", input]
        let reference = try server.newDatabase()
        let clean = try runCommand(sluice, load + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        #expect(expected[0].count == 20_000)

        var landed = false
        for attempt in 0..<4 where !landed {
            let database = try server.newDatabase()
            var poll: PostgresReader? = PostgresReader(database)
            let killed = try SyncCrashTests.killed(load + ["--into", database]) {
                poll?.value(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND query LIKE 'COPY \"\(table)\" %'") == "1"
            }
            poll = nil
            let stored = Int(PostgresReader(database).value("SELECT count(*) FROM \"\(table)\"") ?? "") ?? -1
            landed = killed && stored < expected[table == "Event" ? 0 : 3].count
            let again = try runCommand(sluice, load + ["--into", database] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(dump(database) == expected, "attempt \(attempt), killed with \(stored) rows of \(table) stored")
            let runs = PostgresReader(database).rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
            #expect(runs.last == "completed", "attempt \(attempt): \(runs)")
        }
        #expect(landed, "no kill landed while \(table) was copied")
    }
}
