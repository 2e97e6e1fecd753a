import Foundation
import SluiceTestSupport
import Testing

/// Second runs, resumed runs and zero-config runs of the nightly sync, by
/// the binary: each must end in the store an uninterrupted run gives.
@Suite(.serialized) struct SyncCrashTests {
    /// The sync mapping: events with tag links and tag stubs (also the
    /// PostgreSQL tests').
    static let syncMapping = TestPaths.file("sync.yml", TestMappings.sync)
    let mapping = SyncCrashTests.syncMapping

    /// Events with shuffled integer keys from `ids`, two or three tags each.
    static func events(_ ids: [Int], name: String) -> String {
        var generator = SplitMix(seed: 7)
        let lines = ids.shuffled(using: &generator).map { id in
            #"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(id * 3), "ratio": \#(Double(id) / 4), "ok": \#(id % 2 == 0), "tags": ["t\#(id % 5)", "u\#(id % 3)"\#(id % 4 == 0 ? #", "v""# : "")]}"#
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    /// The suite's inputs, made once for all its tests rather than once
    /// for each.
    static let all = events(Array(1...60_000), name: "all.jsonl")
    static let third = events((1...60_000).filter { $0 % 3 == 0 }, name: "third.jsonl")
    static let small = events(Array(1...15_000), name: "small.jsonl")
    /// The nights' day 0 (30,000 events), the day before it (30,500) and
    /// their next day (every tenth of day 0's gone).
    static let day0 = events(Array(1...30_000), name: "day0.jsonl")
    static let more = events(Array(1...30_500), name: "more.jsonl")
    static let most = events((1...30_000).filter { $0 % 10 != 0 }, name: "most.jsonl")

    /// The rows of `tables` in `store` (a SQLite file or a PostgreSQL
    /// database), in key order.
    func dump(_ store: String, _ tables: [String] = ["Event", "Event_tags", "Tag"]) -> [[[String?]]] {
        tables.map { Self.rows(store, "SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
    }

    /// The status of each run `store`'s ledger holds, oldest first.
    func statuses(_ store: String) -> [String] {
        Self.rows(store, "SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
    }

    /// Runs `arguments` (with `input` piped to its standard input when
    /// given: only its first `held` bytes, the pipe kept open, when `held`
    /// is given) and kills the process with SIGKILL once `ready` says so
    /// (polled every millisecond) or after `timeout` seconds; returns
    /// whether it was killed before it finished.
    static func killed(
        _ arguments: [String], input: Data? = nil, held: Int? = nil, timeout: Double = 60, when ready: () -> Bool
    ) throws -> Bool {
        try killed(arguments, input: input, held: held, timeout: timeout) { (_: Int32) in ready() }
    }

    /// ``killed(_:input:held:timeout:when:)`` with `ready` handed the
    /// process's id, to read what `/proc` says of it.
    static func killed(
        _ arguments: [String], input: Data? = nil, held: Int? = nil, timeout: Double = 60,
        when ready: (_ pid: Int32) -> Bool
    ) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sluice)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let pipe = input.map { _ in Pipe() }
        if let pipe { process.standardInput = pipe }
        try process.run()
        if let input, let pipe {
            let writer = Thread { writeQuietly(input.prefix(held ?? input.count), to: pipe, keepOpen: held != nil) }
            writer.start()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline && !ready(process.processIdentifier) { usleep(1_000) }
        var wasKilled = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            wasKilled = true
        }
        process.waitUntilExit()
        if held != nil { try? pipe?.fileHandleForWriting.close() }
        return wasKilled && process.terminationReason == .uncaughtSignal
    }

    /// Runs `arguments` into `store`, kills it once `sql` counts more than
    /// nothing in `store` (``killed(_:timeout:when:)``) and waits until the
    /// killed run has left the store; returns whether it was killed.
    func killed(_ arguments: [String], into store: String, once sql: String) throws -> Bool {
        try killing(store) { poller in try Self.killed(arguments + ["--into", store]) { poller.number(sql) > 0 } }
    }

    /// A kill while the delete-missing sweep has deleted some rows but not
    /// all, then `--resume --delete-missing`: before the fix the resumed run
    /// skipped every record, saw no keys, deleted nothing and said
    /// `completed`.
    @Test(arguments: ["key", "input"]) func aKillDuringTheSweepResumesToTheSameStore(order: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, Self.all]).status == 0)
        let reference = directory.appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: reference)
        let sync = ["import", "--mapping", mapping, "--order", order, "--delete-missing", Self.third]
        let clean = try runCommand(sluice, sync + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        #expect(expected[0].count == 20_000)

        var killedMidSweep = 0
        for attempt in 0..<4 where killedMidSweep < 2 {
            let store = directory.appendingPathComponent("crash\(attempt).sqlite").path
            try FileManager.default.copyItem(atPath: base, toPath: store)
            let wasKilled = try Self.killed(sync + ["--into", store]) { StoreReader(store).count("Event") < 60_000 }
            let left = StoreReader(store).count("Event")
            if wasKilled && left > 20_000 && left < 60_000 { killedMidSweep += 1 }
            let resumed = try runCommand(sluice, sync + ["--into", store, "--resume"])
            #expect(resumed.status == 0, "attempt \(attempt): \(resumed.stderr)")
            #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
            #expect(
                dump(store) == expected,
                "attempt \(attempt): killed with \(left) events left, the resumed store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
            #expect(
                StoreReader(store).value(
                    "SELECT count(*) FROM sqlite_schema WHERE name LIKE '\\_sluice\\_seen%' ESCAPE '\\'") == "0")
        }
        #expect(killedMidSweep >= 1, "no kill landed inside the sweep")
    }

    /// A next day with `--delete-missing` that skips the records it kept
    /// records their keys as seen before it parses, when the digest set does
    /// not cover Event (a run without `--delete-missing` dropped records the
    /// one before had): killed then, and resumed (a resumed run parses every
    /// record) or run afresh, it ends where an uninterrupted run does, and
    /// the run after a fresh one skips again (before, a run that swept
    /// parsed every record).
    @Test(arguments: RecordDigestTests.kinds)
    func aKillWhileSkippedKeysAreRecordedEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        let seen = "SELECT count(*) FROM \"_sluice_seen_Event\""
        let night = KilledNight(
            mapping: mapping,
            days: [Self.more, Self.day0], covered: ("SELECT count(*) FROM _sluice_digest_covered", [["0"]]),
            options: ["--delete-missing"], next: Self.most,
            unchanged: 27_000, attempts: 6, phase: "while the keys were recorded", againOnlyOnceAFreshKillLanded: true
        ) { sync, store, _ in
            let wasKilled = try killed(sync, into: store, once: seen)
            let recorded = Self.number(store, seen)
            return (wasKilled && recorded > 0 && Self.count(store, "Event") == 30_500, "\(recorded) keys seen")
        }
        try endsWhereAnUninterruptedRunDoes(night, kind)
    }

    /// The same night when the digest set covers Event (its store was made
    /// by the digest run that kept the set): the run records no skipped
    /// key, only the keys of the 3,000 records gone (`_sluice_removed_Event`),
    /// and sweeps among them. Killed once they are recorded (before or
    /// during the sweep), then resumed or run afresh, it ends where an
    /// uninterrupted run does, and the run after a fresh one skips again.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillOnceTheRemovedKeysAreRecordedEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        var night = KilledNight(
            mapping: mapping, days: [Self.day0], covered: ("SELECT entity FROM _sluice_digest_covered", [["Event"]]),
            options: ["--delete-missing"], next: Self.most,
            unchanged: 27_000, attempts: 8, phase: "once the removed keys were recorded"
        ) { sync, store, attempt in
            let removed = "SELECT count(*) FROM \"_sluice_removed_Event\""
            let wasKilled = try killed(sync, into: store, once: removed)
            let recorded = Self.number(store, removed)
            let seen = Self.number(store, "SELECT count(*) FROM \"_sluice_seen_Event\"")
            if wasKilled && recorded > 0 {
                #expect(recorded == 3_000 && seen == 0, "attempt \(attempt): \(recorded) removed, \(seen) seen")
            }
            return (wasKilled && recorded > 0, "\(recorded) keys recorded")
        }
        night.check = { store in #expect(Self.tables(store, "_sluice_removed") == "0") }
        try endsWhereAnUninterruptedRunDoes(night, kind)
    }

    /// Zero-config with integer keys imported twice: before the fix the key
    /// column was made TEXT from the first guess and the second run failed
    /// with `UNIQUE constraint failed`.
    @Test(arguments: ["key", "input"]) func zeroConfigReimportsFindEveryRowUnchanged(order: String) throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("zero.sqlite").path
        let arguments = [
            "import", "--into", store, "--entity", "Event", "--key", "id", "--order", order, "--stats-json",
        ]
        for run in 0..<2 {
            let stats = TestPaths.temporaryDirectory().appendingPathComponent("stats.json").path
            let result = try runCommand(sluice, arguments + [stats, Self.third])
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            let text = try String(contentsOfFile: stats, encoding: .utf8)
            // In key order the second run does not even parse them (record digests).
            let expected =
                run == 0
                ? #""inserted": 20000, "updated": 0, "unchanged": 0"#
                : order == "key"
                    ? #""unchangedRecords": 20000"# : #""inserted": 0, "updated": 0, "unchanged": 20000"#
            #expect(text.contains(expected), "run \(run): \(text)")
        }
        let reader = StoreReader(store)
        let types = reader.rows("SELECT name, type FROM pragma_table_info('Event') ORDER BY cid")
        #expect(
            types == [
                ["id", "INTEGER"], ["kind", "TEXT"], ["score", "INTEGER"], ["ratio", "REAL"], ["ok", "INTEGER"],
                ["tags", "JSON TEXT"],
            ])
        #expect(reader.value("SELECT typeof(id) || typeof(ratio) FROM Event LIMIT 1") == "integerreal")
    }

    /// Zero-config killed at 22 points in each order, resumed: the same
    /// store as an uninterrupted run.
    @Test(arguments: ["key", "input"]) func zeroConfigKilledAnywhereResumesToTheSameStore(order: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let arguments = [
            "import", "--entity", "Event", "--key", "id", "--order", order, "--batch-rows", "500", Self.small,
        ]
        let reference = directory.appendingPathComponent("reference.sqlite").path
        let started = Date()
        #expect(try runCommand(sluice, arguments + ["--into", reference]).status == 0)
        let duration = Date().timeIntervalSince(started)
        let expected = dump(reference, ["Event"])
        #expect(expected[0].count == 15_000)

        var generator = SplitMix(seed: 11)
        var killedAfterCommit = 0
        for attempt in 0..<22 {
            let store = directory.appendingPathComponent("crash\(attempt).sqlite").path
            let stop = Date().addingTimeInterval(duration * Double.random(in: 0.05...0.95, using: &generator))
            let wasKilled = try Self.killed(arguments + ["--into", store]) {
                attempt % 4 == 0 ? StoreReader(store).count("Event") > 0 : Date() >= stop
            }
            if wasKilled && StoreReader(store).count("Event") > 0 { killedAfterCommit += 1 }
            let resumed = try runCommand(sluice, arguments + ["--into", store, "--resume"])
            #expect(resumed.status == 0, "attempt \(attempt): \(resumed.stderr)")
            #expect(dump(store, ["Event"]) == expected, "attempt \(attempt): the resumed store differs")
            let again = try runCommand(sluice, arguments + ["--into", store])
            #expect(
                again.status == 0 && again.stdout.contains("15000"),
                "attempt \(attempt): \(again.stdout)\(again.stderr)")
        }
        #expect(killedAfterCommit >= 3, "only \(killedAfterCommit) kills landed after the first commit")
    }
}
