import Foundation
import SluiceTestSupport
import Testing

/// Zero-config imports (`--entity`, `--key`) with `--threads`: a table's
/// columns are discovered and typed by the records in input order, and
/// such a run parses on one thread whatever `--threads` says
/// (`ParseWorkers.refusal`; docs/performance.md, "Zero-config imports on
/// several threads: built, measured, not kept"). Whatever the threads, the
/// table has the columns of one thread, in its order and types, and every
/// value is stored as one thread stores it, after a kill and a resume too.
extension ParallelParseTests {
    /// `count` records, most about 120 bytes. Every tenth repeats the key
    /// of one far before it (its row is the field-by-field merge of both).
    /// Column `c<k>` first appears in record 450 k + 237, in items far
    /// apart, then in every seventh record; its first value's kind (string,
    /// integer, double, boolean, object, array) decides its type, and the later
    /// values are of every kind, so that each is converted for the column
    /// the first decided (of its first kind only, unless `mixed`: a
    /// PostgreSQL column refuses a value its type cannot hold).
    /// `extra(index)` adds members to record `index`; record `bad`, when
    /// given, is `badLine`.
    func zeroConfigLines(
        count: Int, columns: Int = 24, mixed: Bool = true, bad: Int? = nil, badLine: String = "",
        extra: (Int) -> String = { _ in "" }
    ) -> [String] {
        let kinds = [#""s%d""#, "%d", "%d.5", "true", #"{"v": %d}"#, #"[%d, "x"]"#]
        return (1...count).map { index in
            if index == bad { return badLine }
            let id = index % 10 == 0 ? index / 3 : index
            var members = [#""id": \#(id)"#, #""kind": "k\#(index % 7)""#]
            if index % 3 == 0 { members.append(#""score": \#(index)"#) }
            for column in 0..<columns where index >= column * 450 + 237 {
                let first = index == column * 450 + 237
                guard first || index % 7 == column % 7 else { continue }
                let kind = kinds[(first || !mixed ? column : index / 7) % kinds.count]
                members.append(#""c\#(column)": \#(kind.replacingOccurrences(of: "%d", with: "\(index)"))"#)
            }
            members.append(extra(index))
            return "{" + members.filter { !$0.isEmpty }.joined(separator: ", ") + "}"
        }
    }

    /// The records of ``zeroConfigLines(count:columns:mixed:bad:badLine:extra:)``
    /// as JSON Lines, or as one JSON array (`array`).
    func zeroConfigInput(_ name: String, _ lines: [String], array: Bool = false) -> String {
        TestPaths.file(
            name, array ? "[\n" + lines.joined(separator: ",\n") + "\n]\n" : lines.joined(separator: "\n") + "\n")
    }

    func zeroConfigArguments(_ store: String, _ input: String, threads: Int, _ extra: [String] = []) -> [String] {
        ["import", "--entity", "Event", "--key", "id", "--into", store, "--threads", "\(threads)", "-q"] + extra + [
            input
        ]
    }

    /// Every table as ``dump(_:)`` gives it, and the project's table with
    /// each value quoted (`quote()`: an integer, a real and a text that
    /// print alike differ) under its `CREATE TABLE` statement, which names
    /// the columns in order with their types. Of each input's checkpoint,
    /// its records: a complete input's bytes are where its last group was
    /// cut, which the chunk size moves, with one thread as with several.
    func typedDump(_ store: String) -> [String: [String]] {
        var tables = dump(store)
        let reader = StoreReader(store)
        tables["_sluice_checkpoints"] = reader.rows(
            "SELECT input || '|' || records FROM _sluice_checkpoints ORDER BY 1"
        )
        .map { $0.first.flatMap { $0 } ?? "" }
        let columns = reader.rows("SELECT name FROM pragma_table_info('Event') ORDER BY cid").compactMap {
            $0.first ?? nil
        }
        let quoted = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
        tables["Event (typed)"] =
            reader.rows("SELECT sql FROM sqlite_master WHERE name = 'Event'").map { $0.first.flatMap { $0 } ?? "" }
            + reader.rows("SELECT \(quoted) FROM Event ORDER BY id").map { $0.first.flatMap { $0 } ?? "NULL" }
        return tables
    }

    /// JSON Lines and a JSON array, read in whole chunks and 1 KiB ones,
    /// with groups of 40 rows and of 200 (`--batch-rows`): the
    /// first import into a new store, then a file whose records add columns
    /// and change values into the stored table. Each run on two, three and
    /// four threads gives one thread's tables, types and statistics.
    @Test(arguments: [false, true])
    func zeroConfigWithThreadsGivesTheColumnsTypesAndStatisticsOfOne(array: Bool) throws {
        let form = array ? "array" : "lines"
        let suffix = array ? "json" : "jsonl"
        let day0 = zeroConfigInput("zero-\(form)-0.\(suffix)", zeroConfigLines(count: 12_000), array: array)
        let day1 = zeroConfigInput(
            "zero-\(form)-1.\(suffix)",
            zeroConfigLines(count: 12_000, columns: 28) { index in
                index % 101 == 0 ? #""late\#(index % 5)": \#(index % 2 == 0 ? "\(index)" : #""t\#(index)""#)"# : ""
            }, array: array)
        let runs = [(1, 65_536, 10_000), (2, 1_024, 10_000), (3, 65_536, 40), (4, 1_024, 200)]
        let paths = runs.map { store("zero-\(form)-\($0.0).sqlite") }
        var create = ""
        try eachRunGivesWhatTheFirstGives(
            steps: 2, runs: runs, paths: paths,
            named: { "--threads \($0.0), chunks of \($0.1), groups of \($0.2)" },
            command: { step, run, path, stats in
                zeroConfigArguments(
                    path, step == 0 ? day0 : day1, threads: run.0,
                    ["--no-skip", "--chunk-size", "\(run.1)", "--batch-rows", "\(run.2)", "--stats-json", stats])
            },
            tables: typedDump,
            first: { step, first in
                #expect(first.tables["Event"]?.count ?? 0 > 10_000, "step \(step)")
                create = first.tables["Event (typed)"]?.first ?? ""
            })
        for column in [
            "\"c0\" TEXT", "\"c1\" INTEGER", "\"c2\" REAL", "\"c3\" INTEGER", "\"c4\" JSON TEXT", "\"c5\" JSON TEXT",
            "\"late0\"",
        ] {
            #expect(create.contains(column), "\(create)")
        }
    }

    /// Errors a zero-config run meets next to a new column: a member whose
    /// name differs from a column's only in letter case (a refusal of the
    /// mapper that adds columns), and a malformed record three records
    /// after a new column's first. The message of one thread
    /// (file, line:column, byte, record number), and every record before
    /// the failed one committed.
    @Test(arguments: [
        ("case", 9_001, #"{"id": 5, "KIND": "x"}"#),
        ("malformed", 4_740, #"{"id": 5, "kind": nope}"#),
    ])
    func zeroConfigErrorsAreReportedAsOneThreadReportsThem(name: String, bad: Int, line: String) throws {
        let input = zeroConfigInput("zero-\(name).jsonl", zeroConfigLines(count: 12_000, bad: bad, badLine: line))
        struct Failure: Equatable {
            var message: String
            var tables: [String: [String]]
        }
        let first = try eachGivesWhatTheFirstGives { threads in
            let path = store("zero-\(name)-\(threads).sqlite")
            let run = try runCommand(
                sluice, zeroConfigArguments(path, input, threads: threads, ["--batch-rows", "500"]))
            #expect(run.status == 65)
            return Failure(message: run.stderr, tables: typedDump(path).filter { $0.key.hasPrefix("Event") })
        }
        #expect(first?.message.contains("record \(bad): ") == true, "\(first?.message ?? "")")
        #expect(first?.tables["Event"]?.isEmpty == false)
    }

    /// Zero-config runs that keep record digests: the first import, the
    /// same file again (every unit skipped), then the next day with
    /// `--delete-missing`, whose changed records add columns. Every table,
    /// the digest tables included, and the statistics are one thread's.
    @Test func zeroConfigDigestRunsWithThreadsGiveTheStoreAndStatisticsOfOne() throws {
        let lines = zeroConfigLines(count: 12_000)
        let day0 = zeroConfigInput("zero-digest-0.jsonl", lines)
        let changed = lines.enumerated().compactMap { index, line -> String? in
            guard index % 97 != 96 else { return nil }
            guard index % 50 == 0 else { return line }
            return String(line.dropLast()) + #", "changed\#(index % 3)": \#(index % 100 == 0 ? "1" : #""one""#)}"#
        }
        let day1 = zeroConfigInput("zero-digest-1.jsonl", changed)
        let runs = [(1, 65_536), (2, 1_024), (3, 65_536)]
        let paths = runs.map { store("zero-digest-\($0.0).sqlite") }
        try sharedSecretStores(paths, seed: "zero-digest-seed.sqlite") { path, extra in
            zeroConfigArguments(
                path, zeroConfigInput("zero-digest-seed.jsonl", [#"{"id": 0, "kind": "k"}"#]), threads: 1, extra)
        }
        let steps: [(input: String, extra: [String], skips: Bool)] = [
            (day0, [], false), (day0, [], true), (day1, ["--delete-missing"], true),
        ]
        var create = ""
        try eachRunGivesWhatTheFirstGives(
            steps: steps.count, runs: runs, paths: paths, named: { "--threads \($0.0)" },
            command: { number, run, path, stats in
                let extra = steps[number].extra + ["--chunk-size", "\(run.1)", "--stats-json", stats]
                return zeroConfigArguments(path, steps[number].input, threads: run.0, extra)
            },
            tables: typedDump,
            first: { number, first in
                #expect(first.tables["_sluice_unit_pages"]?.isEmpty == false, "step \(number)")
                let unchanged = first.statistics["unchangedRecords"] as? Int ?? 0
                #expect(steps[number].skips ? unchanged > 6_000 : unchanged == 0, "step \(number): \(unchanged)")
                create = first.tables["Event (typed)"]?.first ?? ""
            })
        #expect(create.contains("\"changed2\" TEXT"), "\(create)")
    }

    /// A zero-config run on two threads killed at random moments, resumed
    /// on three, ends in the table of one uninterrupted thread: its
    /// columns, their types and every value.
    @Test func killedZeroConfigRunResumedWithOtherThreadsGivesTheSameTable() throws {
        let input = zeroConfigInput("zero-resume.jsonl", zeroConfigLines(count: 20_000))
        let extra = ["--batch-rows", "300", "--sort-mib", "1", "--no-skip"]
        let reference = store("zero-resume-reference.sqlite")
        let duration = try timed(zeroConfigArguments(reference, input, threads: 1, extra))
        let expected = typedDump(reference).filter { $0.key.hasPrefix("Event") }
        try killedRunsResumed(
            "zero-resume", duration: duration, killed: { zeroConfigArguments($0, input, threads: 2, extra) },
            resumed: { zeroConfigArguments($0, input, threads: 3, extra + ["--resume"]) },
            check: { path, attempt in
                #expect(typedDump(path).filter { $0.key.hasPrefix("Event") } == expected, "attempt \(attempt)")
            })
    }
}

/// Zero-config imports into PostgreSQL on several threads.
extension ParallelParseTests {
    /// A first import, then a file that adds columns to the stored table,
    /// into PostgreSQL on one thread and on three: the same columns in the
    /// same order and types, and every row the same, value for value
    /// (`row_to_json`, which tells a number from its text); then a value
    /// the column's type cannot hold, refused with the record's number.
    @Test(.enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started"))
    func zeroConfigIntoPostgreSQLWithThreadsGivesTheTableOfOne() throws {
        let server = try PostgresTestServer.require()
        let day0 = zeroConfigInput("zero-pg-0.jsonl", zeroConfigLines(count: 6_000, mixed: false))
        let day1 = zeroConfigInput("zero-pg-1.jsonl", zeroConfigLines(count: 6_000, columns: 28, mixed: false))
        let outcomes = try [1, 3].map { threads -> [[String?]] in
            let database = try server.newDatabase()
            for input in [day0, day1] {
                let run = try runCommand(
                    sluice,
                    zeroConfigArguments(database, input, threads: threads, ["--no-skip", "--chunk-size", "1024"]))
                #expect(run.status == 0, "\(run.stderr)")
            }
            // A value its column's type cannot hold: the store names the record, not its sort ordinal.
            let bad = zeroConfigInput(
                "zero-pg-bad.jsonl", [#"{"id": 1, "c1": 5}"#, #"{"id": 2, "c1": [5]}"#, #"{"id": 3, "c1": 6}"#])
            let refused = try runCommand(sluice, zeroConfigArguments(database, bad, threads: threads, ["--no-skip"]))
            #expect(refused.status == 74)
            #expect(
                refused.stderr.contains(#"record 2: column "c1" is bigint, and the value [5] is not one"#),
                "\(refused.stderr)")
            let reader = PostgresReader(database)
            return reader.rows(
                "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_name = 'Event' "
                    + "ORDER BY ordinal_position")
                + reader.rows(#"SELECT row_to_json(e)::text FROM "Event" e ORDER BY id"#)
        }
        #expect(outcomes[0].count > 5_000)
        #expect(outcomes[0].contains(["c4 jsonb"]))
        #expect(outcomes[1] == outcomes[0])
    }
}
