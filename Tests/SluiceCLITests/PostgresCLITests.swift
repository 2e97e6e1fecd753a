import Foundation
import SluiceTestSupport
import Testing

/// The binary against a PostgreSQL server the tests start: a sync killed
/// in each phase and resumed, a skipping sync killed while it hashes and
/// while it probes, a connection lost mid-run and resumed, four
/// importers at once, the server's errors, and `sluice status`.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresCLITests {
    let mapping = SyncCrashTests.syncMapping

    let all = SyncCrashTests.events(Array(1...60_000), name: "all.jsonl")
    let third = SyncCrashTests.events((1...60_000).filter { $0 % 3 == 0 }, name: "third.jsonl")

    func dump(_ database: String) -> [[[String?]]] {
        let reader = PostgresReader(database)
        return ["Event", "Event_tags", "Tag"].map { reader.rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
    }

    func statuses(_ database: String) -> [String] {
        PostgresReader(database).rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
    }

    /// The database a connection string names.
    func name(_ database: String) -> String {
        String(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? "")
    }

    /// The last statement of each other session on `database`.
    func sessions(_ server: PostgresTestServer, _ database: String) -> [String] {
        PostgresReader(server.conninfo()).rows(
            "SELECT coalesce(query, '') FROM pg_stat_activity WHERE datname = '\(name(database))' "
                + "AND pid <> pg_backend_pid()"
        ).map { $0[0] ?? "" }
    }

    /// A new database holding what `database` holds
    /// (``PostgresTestServer/copy(of:_:)``).
    func copy(_ server: PostgresTestServer, of database: String, _ suffix: String) throws -> String {
        try server.copy(of: database, suffix)
    }

    /// The digest set `sluice status --json` shows: its units and whether
    /// the next run trusts it.
    func digests(_ database: String) throws -> [String] {
        let json = try runCommand(sluice, ["status", "--json", database]).stdout
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let digests = object?["digests"] as? [String: Any]
        return [
            (digests?["units"] as? Int).map { "\($0) units" } ?? "none",
            (digests?["valid"] as? Bool).map { "valid \($0)" } ?? "none",
        ]
    }

    /// Waits until no session of a killed importer is left on `database`
    /// (``PostgresTestServer/waitForIdle(_:)``).
    func waitForIdle(_ server: PostgresTestServer, _ database: String) { server.waitForIdle(database) }

    /// A nightly sync with delete-missing, killed while reading, while
    /// applying, while sweeping and while counting dangling links, then
    /// resumed: each ends in the database an uninterrupted sync gives.
    @Test(arguments: ["key", "input"]) func killedInEveryPhaseResumesToTheSameDatabase(order: String) throws {
        let server = try PostgresTestServer.require()
        let reference = try server.newDatabase()
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", reference, all]).status == 0)
        let sync = [
            "import", "--mapping", mapping, "--order", order, "--batch-rows", "2000", "--delete-missing", third,
        ]
        let clean = try runCommand(sluice, sync + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        #expect(expected[0].count == 20_000)

        let phases: [(name: String, reached: (String) -> Bool)] = [
            ("reading", { _ in true }),
            ("applying", { $0.hasPrefix("WITH w AS (INSERT") || $0.hasPrefix("COPY") }),
            ("deleting", { $0.hasPrefix("WITH gone AS (DELETE FROM \"Event\" t WHERE NOT EXISTS") }),
            (
                "checking",
                { $0.hasPrefix("SELECT coalesce(sum(n), 0)") || $0.hasPrefix("SELECT count(*) FROM \"Event\" s") }
            ),
        ]
        var killedPhases: [String] = []
        for phase in phases {
            let database = try server.newDatabase()
            #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, all]).status == 0)
            if try SyncCrashTests.killed(
                sync + ["--into", database], when: { sessions(server, database).contains(where: phase.reached) })
            {
                killedPhases.append(phase.name)
            }
            waitForIdle(server, database)
            let resumed = try runCommand(sluice, sync + ["--into", database, "--resume"])
            #expect(resumed.status == 0, "\(phase.name): \(resumed.stderr)")
            #expect(dump(database) == expected, "killed while \(phase.name): the resumed database differs")
            let runs = statuses(database)
            #expect(runs.last == "completed", "\(phase.name): \(runs)")
            #expect(runs.allSatisfy { $0 == "completed" || $0 == "interrupted" }, "\(phase.name): \(runs)")
            #expect(
                PostgresReader(database).value(
                    "SELECT count(*) FROM pg_class WHERE relname LIKE '\\_sluice\\_seen\\_%'") == "0")
        }
        #expect(killedPhases.count >= 3, "killed only while \(killedPhases)")
    }

    /// The server ends the importer's session mid-run (a restart, a
    /// failover): the run fails naming the server's message, keeps what it
    /// committed, and `--resume` ends where an uninterrupted run would.
    @Test func aLostConnectionFailsCleanlyAndResumes() throws {
        let server = try PostgresTestServer.require()
        let reference = try server.newDatabase()
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", reference, all]).status == 0)
        let expected = dump(reference)

        let database = try server.newDatabase()
        let arguments = [
            "import", "--mapping", mapping, "--into", database, "--order", "input", "--batch-rows", "300", all,
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sluice)
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let name = database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline
            && (Int(PostgresReader(database).value("SELECT count(*) FROM \"Event\"") ?? "") ?? 0) < 3_000
        {
            usleep(2_000)
        }
        let terminated = PostgresReader(server.conninfo()).value(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()) t"
        )
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(terminated != "0")
        #expect(process.terminationStatus != 0, "the run succeeded after losing its connection")
        #expect(
            stderr.contains("terminating connection") || stderr.contains("server closed the connection"), "\(stderr)")
        #expect(!stderr.contains("Fatal error"), "\(stderr)")
        let committed = Int(PostgresReader(database).value("SELECT count(*) FROM \"Event\"") ?? "") ?? 0
        #expect(committed >= 3_000)

        waitForIdle(server, database)
        let resumed = try runCommand(sluice, arguments + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(dump(database) == expected)
    }

    /// Four importers of disjoint quarters at once, sharing tags: none
    /// deadlocks or fails, no key is stored twice, and the database equals
    /// one import of the whole.
    @Test func fourImportersAtOnceGiveTheSameDatabase() throws {
        let server = try PostgresTestServer.require()
        let reference = try server.newDatabase()
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", reference, all]).status == 0)
        let expected = dump(reference)

        let database = try server.newDatabase()
        let quarters = (0..<4).map { quarter in
            SyncCrashTests.events((1...60_000).filter { $0 % 4 == quarter }, name: "quarter\(quarter).jsonl")
        }
        let processes = try quarters.map { file -> (Process, Pipe) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = ["import", "--mapping", mapping, "--into", database, "--batch-rows", "1000", file]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            return (process, errors)
        }
        for (process, errors) in processes {
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(stderr)")
        }
        #expect(dump(database) == expected)
        #expect(statuses(database) == ["completed", "completed", "completed", "completed"])
    }

    /// A constraint of the user's own rejects a row: the error names the
    /// server's message, its SQLSTATE and the statement; nothing of the
    /// failed batch stays.
    @Test func serverErrorsNameTheirSQLStateAndStatement() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        _ = PostgresReader(database).rows(
            #"CREATE TABLE "Event" (id bigint PRIMARY KEY, kind text, score bigint CHECK (score < 100))"#)
        let input = TestPaths.file(
            "bad.jsonl", #"{"id": 1, "kind": "a", "score": 5}"# + "\n" + #"{"id": 2, "kind": "b", "score": 500}"# + "\n"
        )
        let result = try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, input])
        #expect(result.status != 0)
        #expect(result.stderr.contains("SQLSTATE 23514"), "\(result.stderr)")
        #expect(result.stderr.contains("violates check constraint"), "\(result.stderr)")
        #expect(result.stderr.contains(#"INSERT INTO "Event""#), "\(result.stderr)")
        #expect(PostgresReader(database).value(#"SELECT count(*) FROM "Event""#) == "0")
        #expect(statuses(database) == ["failed"])
    }

    @Test func statusReadsTheDatabase() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        let input = TestPaths.file(
            "two.jsonl", #"{"id": 1, "tags": ["a"]}"# + "\n" + #"{"id": 2, "tags": ["a", "b"]}"# + "\n")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, input]).status == 0)
        let status = try runCommand(sluice, ["status", database])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Event: 2 rows"), "\(status.stdout)")
        #expect(status.stdout.contains("Event_tags: 3 rows"), "\(status.stdout)")
        #expect(status.stdout.contains("completed"), "\(status.stdout)")
        #expect(status.stdout.contains("two.jsonl: 2 records"), "\(status.stdout)")
    }

    /// `--max-delete` on PostgreSQL: a partial dump that would delete 1,800
    /// of 2,100 events is refused (exit 65, the counts named, nothing
    /// deleted, the new events committed); resumed with a larger limit it
    /// deletes them.
    @Test func maxDeleteRefusesThenAResumeWithALargerLimitDeletes() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        let all = SyncCrashTests.events(Array(1...2_000), name: "pg-rails-all.jsonl")
        let partial = SyncCrashTests.events(Array(1...200) + Array(2_001...2_100), name: "pg-rails-partial.jsonl")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, all]).status == 0)
        let sync = ["import", "--mapping", mapping, "--into", database, "--delete-missing", partial]
        let refused = try runCommand(sluice, sync + ["--max-delete", "1799"])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("Event would lose 1800 of its 2100 stored rows (85.7%)"), "\(refused.stderr)")
        #expect(PostgresReader(database).value(#"SELECT count(*) FROM "Event""#) == "2100")
        #expect(statuses(database) == ["completed", "failed"])
        let resumed = try runCommand(sluice, sync + ["--resume", "--max-delete", "86%"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(PostgresReader(database).value(#"SELECT count(*) FROM "Event""#) == "300")
        #expect(
            PostgresReader(database).value("SELECT count(*) FROM pg_class WHERE relname LIKE '\\_sluice\\_seen\\_%'")
                == "0")
    }

    /// `--dry-run` on PostgreSQL: into an empty database it creates no
    /// table; on a loaded one, an update file with `--delete-missing`
    /// leaves every row and the ledger as they were, and counts exactly
    /// what the real run that follows writes.
    @Test func aDryRunLeavesTheRowsAndCountsWhatTheRunWould() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        let all = SyncCrashTests.events(Array(1...2_000), name: "pg-dry-all.jsonl")
        let update = SafetyRailTests.changed(
            Array(1...2_000).filter { $0 % 9 != 0 } + Array(2_001...2_150), name: "pg-dry-update.jsonl")
        let first = try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, "--dry-run", all])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            PostgresReader(database).value(
                "SELECT count(*) FROM pg_class WHERE relname IN ('Event', 'Tag', 'Event_tags', '_sluice_runs')") == "0")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, all]).status == 0)
        let before = dump(database)
        let directory = TestPaths.temporaryDirectory()
        let sync = ["import", "--mapping", mapping, "--into", database, "--delete-missing", update, "--stats-json"]
        let dry = try runCommand(sluice, sync + [directory.appendingPathComponent("dry.json").path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dump(database) == before)
        #expect(statuses(database) == ["completed"])
        let real = try runCommand(sluice, sync + [directory.appendingPathComponent("real.json").path])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(dump(database) != before)
        let read = { (name: String) throws -> NSDictionary in
            let object = try JSONSerialization.jsonObject(
                with: Data(contentsOf: directory.appendingPathComponent(name)))
            return try #require(object as? [String: Any]).filter {
                !["seconds", "dryRun", "wouldFail"].contains($0.key)
            } as NSDictionary
        }
        let counts = try read("dry.json")
        #expect(counts == (try read("real.json")))
        #expect(((counts["entities"] as? [String: [String: Int]])?["Event"]?["deleted"] ?? 0) > 0, "\(counts)")
    }

    /// A run killed while it saves its record digests (every row written,
    /// its units not: another session holds `_sluice_units` locked, so the
    /// kill lands in the save), then resumed or run afresh: the database
    /// ends as an uninterrupted run leaves it, and the digests, invalid
    /// after the kill, are made anew (by the fresh run, or by the run after
    /// the resumed one, which keeps none) so that the next run skips again.
    @Test(arguments: [true, false]) func killedWhileSavingTheDigestsEndsWhereAnUninterruptedRunEnds(resume: Bool)
        throws
    {
        let server = try PostgresTestServer.require()
        let small = SyncCrashTests.events(Array(1...3_000), name: "pg-digests-small.jsonl")
        let day = SyncCrashTests.events(Array(1...12_000), name: "pg-digests-day.jsonl")
        let run = { (database: String, extra: [String]) throws -> Int in
            let result = try runCommand(
                sluice, ["import", "--mapping", mapping, "--into", database, "--batch-rows", "2000"] + extra)
            #expect(result.status == 0, "\(extra): \(result.stderr)")
            return DifferentialSync.unchangedRecords(result.stdout)
        }
        let reference = try server.newDatabase()
        _ = try run(reference, [small])
        #expect(try run(reference, [day]) == 3_000)
        let expected = dump(reference)

        let database = try server.newDatabase()
        _ = try run(database, [small])
        var holder: PostgresReader? = PostgresReader(database)
        _ = holder?.rows("BEGIN")
        _ = holder?.rows("LOCK TABLE _sluice_units IN SHARE MODE")
        let killed = try SyncCrashTests.killed(
            ["import", "--mapping", mapping, "--into", database, "--batch-rows", "2000", day],
            when: { sessions(server, database).contains { $0.contains("INSERT INTO _sluice_units") } })
        holder = nil
        #expect(killed, "the run ended before it saved its digests")
        waitForIdle(server, database)
        #expect(PostgresReader(database).value("SELECT valid FROM _sluice_digest_state") == "f")
        #expect(dump(database) == expected, "the kill came after the rows were written")

        #expect(try run(database, [day] + (resume ? ["--resume"] : [])) == 0)
        #expect(dump(database) == expected)
        if resume { #expect(try run(database, [day]) == 0) }
        #expect(try run(database, [day]) == 12_000)
        #expect(dump(database) == expected)
        #expect(statuses(database).filter { $0 != "completed" } == ["interrupted"])
    }

    /// A dry run of a run that would save digests leaves them as they were
    /// (its saves roll back with the rest): the real run after it skips
    /// exactly the records the earlier run kept.
    @Test func aDryRunLeavesTheDigestsAsTheyWere() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        let small = SyncCrashTests.events(Array(1...3_000), name: "pg-digests-dry-small.jsonl")
        let day = SyncCrashTests.events(Array(1...12_000), name: "pg-digests-dry-day.jsonl")
        let base = ["import", "--mapping", mapping, "--into", database]
        #expect(try runCommand(sluice, base + [small]).status == 0)
        let state = "SELECT valid, units, (SELECT count(*) FROM _sluice_units) FROM _sluice_digest_state"
        let before = PostgresReader(database).rows(state)
        #expect(before == [["t", "3000", "3000"]])
        let dry = try runCommand(sluice, base + ["--dry-run", day])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(DifferentialSync.unchangedRecords(dry.stdout) == 3_000)
        #expect(PostgresReader(database).rows(state) == before)
        let real = try runCommand(sluice, base + [day])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(DifferentialSync.unchangedRecords(real.stdout) == 3_000)
        #expect(PostgresReader(database).rows(state) == [["t", "12000", "12000"]])
    }

    /// Where ``killedInADigestPhaseEndsWhereAnUninterruptedRunEnds(phase:resume:)``
    /// kills a next day that skips and sweeps. Neither phase writes a row, so
    /// each is told by what the database shows: `hashing` once the run has
    /// marked the digest set invalid and before it reads the units kept (the
    /// hash pass over its input); `probing` once the join has committed the
    /// skipped records' keys as seen and before the first row is written (the
    /// probe of the new units, which parses them without writing), in a store
    /// whose set does not cover Event (so that its sweep reads seen keys).
    enum DigestPhase: String, CaseIterable, CustomStringConvertible {
        case hashing, probing
        var description: String { rawValue }
    }

    /// A next day with `--delete-missing` that skips the 5,400 records day 0
    /// kept, killed in a phase of its plan (``DigestPhase``), then resumed or
    /// run afresh: every table ends as an uninterrupted run leaves it; the
    /// digest set, invalid after the kill, is made anew (by the fresh run, or
    /// by the run after the resumed one, which keeps none) with the units and
    /// validity `sluice status --json` shows for the uninterrupted run; and the
    /// next run skips every record; whether the killed run had committed the
    /// skipped keys as seen (`probing`) or not (`hashing`).
    @Test(arguments: DigestPhase.allCases, [true, false])
    func killedInADigestPhaseEndsWhereAnUninterruptedRunEnds(phase: DigestPhase, resume: Bool) throws {
        let server = try PostgresTestServer.require()
        let day0 = SyncCrashTests.events(Array(1...6_000), name: "pg-phases-day0.jsonl")
        let next = SyncCrashTests.events((1...9_000).filter { $0 % 10 != 0 }, name: "pg-phases-next.jsonl")
        let sync = ["import", "--mapping", mapping, "--delete-missing", next]
        let run = { (database: String, extra: [String]) throws -> Int in
            let result = try runCommand(sluice, sync + ["--into", database] + extra)
            #expect(result.status == 0, "\(extra): \(result.stderr)")
            return DifferentialSync.unchangedRecords(result.stdout)
        }
        let base = try server.newDatabase()
        let load = ["import", "--mapping", mapping, "--into", base]
        if phase == .probing {
            // Fifty records dropped without a sweep: Event is not covered, its sweep reads the seen keys.
            let extra = SyncCrashTests.events(Array(9_001...9_050), name: "pg-phases-extra.jsonl")
            #expect(try runCommand(sluice, load + [day0, extra]).status == 0)
        }
        #expect(try runCommand(sluice, load + [day0]).status == 0)
        let stored = PostgresReader(base).value("SELECT count(*) FROM \"Event\"") ?? ""
        let reference = try copy(server, of: base, "reference")
        #expect(try run(reference, []) == 5_400)
        let expected = dump(reference)
        #expect(expected[0].count == 8_100)
        let kept = try digests(reference)
        #expect(kept == ["8100 units", "valid true"])

        var landed = false
        for attempt in 0..<4 where !landed {
            let database = try copy(server, of: base, "a\(attempt)")
            var poll: PostgresReader? = PostgresReader(database)
            func seen() -> Int { Int(poll?.value("SELECT count(*) FROM \"_sluice_seen_Event\"") ?? "") ?? 0 }
            var importer = ""
            let killed = try SyncCrashTests.killed(sync + ["--into", database]) {
                importer =
                    poll?.value(
                        "SELECT coalesce(string_agg(query, ' | '), '') FROM pg_stat_activity "
                            + "WHERE datname = current_database() AND pid <> pg_backend_pid()") ?? ""
                switch phase {
                case .hashing: return poll?.value("SELECT valid FROM _sluice_digest_state") == "f"
                case .probing: return seen() > 0
                }
            }
            let recorded = seen()
            poll = nil
            waitForIdle(server, database)
            let untouched = PostgresReader(database).value("SELECT count(*) FROM \"Event\"") == stored
            switch phase {
            case .hashing: landed = killed && untouched && recorded == 0 && !importer.contains("FROM _sluice_units")
            case .probing: landed = killed && untouched && recorded == 5_400
            }
            #expect(PostgresReader(database).value("SELECT valid FROM _sluice_digest_state") == "f")

            let context = "attempt \(attempt), \(recorded) keys seen, importer at \(importer.prefix(80))"
            #expect(try run(database, resume ? ["--resume"] : []) == 0, "\(context)")
            #expect(dump(database) == expected, "\(context)")
            if resume { #expect(try run(database, []) == 0, "\(context)") }
            #expect(try digests(database) == kept, "\(context)")
            #expect(try run(database, []) == 8_100, "\(context)")
            #expect(dump(database) == expected, "\(context)")
            #expect(statuses(database).filter { $0 != "completed" } == ["interrupted"], "\(context)")
            #expect(
                PostgresReader(database).value(
                    "SELECT count(*) FROM pg_class WHERE relname LIKE '\\_sluice\\_seen\\_%' "
                        + "OR relname LIKE '\\_sluice\\_removed\\_%'") == "0")
        }
        #expect(landed, "no kill landed while \(phase)")
    }
}
