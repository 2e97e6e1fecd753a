import CSluiceSQLite3
import CSluiceSQLiteWAL
import CSluiceTestVFS
import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Power loss, not only a killed process: a killed process leaves its
/// writes in the operating system's page cache, a machine that loses power
/// loses every write not yet synced. Runs in this process go through the
/// power-loss VFS (Tests/CSluiceTestVFS), which cuts the power at a chosen
/// write, truncate or sync and then puts each store file back to its last
/// synced contents (letting some unsynced writes through, some torn, as a
/// disk that wrote part of its cache in any order would). After each cut,
/// `--resume` must give the store an uninterrupted run gives, or refuse
/// with `cannot resume`; never a different store. A run that reported
/// `completed` must stay completed.
///
/// The cut points are spread over every phase of each scenario (reading,
/// applying, deleting, checking, done) with fixed seeds; for a longer
/// campaign:
///
///     SLUICE_POWER_LOSS_CASES=40 SLUICE_POWER_LOSS_SEED=9 swift test --filter PowerLossTests
@Suite(.serialized) struct PowerLossTests {
    /// Cut points per phase of each scenario.
    static let cases = Int(ProcessInfo.processInfo.environment["SLUICE_POWER_LOSS_CASES"] ?? "") ?? 3
    static let seed = UInt64(ProcessInfo.processInfo.environment["SLUICE_POWER_LOSS_SEED"] ?? "") ?? 20_261_125

    /// Events with tag links and tag stubs, as in the nightly sync.
    static let mapping = TestMappings.sync

    /// `ids` in a shuffled order; `day` changes some scores and tags.
    static func events(_ ids: some Sequence<Int>, day: Int, name: String) -> String {
        var generator = SplitMix(seed: UInt64(day))
        let lines = Array(ids).shuffled(using: &generator).map { id in
            let score = id % 5 == 0 ? id * 3 + day : id * 3
            return
                #"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(score), "tags": ["t\#((id + day) % 5)", "u\#(id % 3)"]}"#
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    static let firstDay = events(1...2_000, day: 1, name: "day1.jsonl")
    /// The next day: 700 events gone, 700 new, a fifth of the rest changed.
    static let secondDay = events(701...2_700, day: 2, name: "day2.jsonl")

    enum Scenario: String, CaseIterable {
        case firstLoadKeyOrder, firstLoadInputOrder, nextDayKeyOrder, nextDayInputOrder

        var order: ApplyOrder { self == .firstLoadKeyOrder || self == .nextDayKeyOrder ? .key : .input }
        var nextDay: Bool { self == .nextDayKeyOrder || self == .nextDayInputOrder }

        /// Small pages, batches and WAL checkpoints, so that a few thousand
        /// events make many commits and many syncs.
        var options: ImportOptions {
            var options = ImportOptions()
            options.order = order
            options.batch.maxRows = 250
            options.store.pageSize = 1_024
            options.store.walCheckpointPages = 64
            options.store.deleteMissing = nextDay
            return options
        }
    }

    init() { #expect(sluice_testvfs_install() == 0) }

    @Test(arguments: Scenario.allCases) func aResumeAfterPowerLossGivesTheUninterruptedStore(scenario: Scenario) throws
    {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        // The next day's dump replaces the first under the same name, as a
        // nightly job's download does.
        let input = directory.appendingPathComponent("dump.jsonl").path
        try FileManager.default.copyItem(atPath: Self.firstDay, toPath: input)
        if scenario.nextDay {
            try run(input, into: base, scenario.options)
            try FileManager.default.removeItem(atPath: input)
            try FileManager.default.copyItem(atPath: Self.secondDay, toPath: input)
        }
        let reference = try store(copying: base, named: "reference")
        try run(input, into: reference, scenario.options)
        let expected = dump(reference)
        #expect(expected[0].count == 2_000 && expected[2].count == 8)

        // A run with the power on: its operations, and where each phase began.
        let counted = try store(copying: base, named: "counted")
        let marks = PhaseMarks()
        #expect(sluice_testvfs_start(directory.path, 0) == 0)
        try run(input, into: counted, scenario.options) { marks.note($0.phase) }
        let total = sluice_testvfs_operations()
        sluice_testvfs_stop()
        let phases = marks.ranges(total: total)
        #expect(phases.count >= (scenario.order == .key ? 3 : 2), "\(phases)")

        // Seeded by the scenario's name (a String's hashValue changes from
        // one process to the next).
        var generator = SplitMix(seed: scenario.rawValue.utf8.reduce(Self.seed) { $0 &* 31 &+ UInt64($1) })
        var cuts: [(phase: String, at: Int64)] = []
        for (phase, range) in phases where !range.isEmpty {
            for _ in 0..<Self.cases { cuts.append((phase, Int64.random(in: range, using: &generator))) }
        }
        for (index, cut) in cuts.enumerated() {
            let store = try store(copying: base, named: "cut\(index)")
            let seed = generator.next()
            let loss = (keep: Int32([0, 30, 70, 100][index % 4]), tear: Int32(index % 2))
            let context =
                "\(scenario) cut \(index) in \(cut.phase) at operation \(cut.at) of \(total), keeping \(loss.keep)%, tear \(loss.tear), seed \(seed)"
            #expect(sluice_testvfs_start(directory.path, cut.at) == 0)
            // A cut while the store closes, after the run is recorded, ends
            // nothing: the run reported completed and must stay so.
            let completed = (try? run(input, into: store, scenario.options)) != nil
            #expect(completed || sluice_testvfs_is_cut() == 1, "\(context): the run failed with the power on")
            sluice_testvfs_cut()
            #expect(sluice_testvfs_power_loss(seed, loss.keep, loss.tear) == 0, "\(context)")
            if completed {
                check(store, expected, "\(context), after the run completed")
            } else {
                // Once started, the run is in the ledger for good.
                let started = cut.phase != "starting"
                #expect(!started || runs(store) == runs(base) + 1, "\(context): the ledger lost the run")
                try resume(input, store, scenario.options, expected, mayRefuse: !started, context)
            }
        }

        // The power lost after the run reported completed, while a reader
        // kept the store open (so that closing it did not checkpoint the WAL).
        for index in 0..<2 {
            let store = try store(copying: base, named: "after\(index)")
            let reader = OpenReader()
            #expect(sluice_testvfs_start(directory.path, 0) == 0)
            try run(input, into: store, scenario.options) { if $0.phase == .checking { reader.open(store) } }
            sluice_testvfs_cut()
            reader.close()
            #expect(sluice_testvfs_power_loss(generator.next(), index == 0 ? 0 : 50, 1) == 0)
            check(store, expected, "\(scenario): power lost after the run completed, a reader open")
        }
    }

    /// A commit that returned is in the WAL whichever write fails, through
    /// the store's VFS, which gathers WAL writes (CSluiceSQLiteWAL): the
    /// process then dies, keeping every write that reached the system (the
    /// model with all unsynced writes kept), and the store must hold the
    /// commit if it returned, and the state before it if it failed. The
    /// transaction spills pages into the WAL and changes them again, so
    /// that SQLite rewrites their frames in place and the commit's frame
    /// header last (walRewriteChecksums).
    @Test func aCommitThatReturnedIsInTheWALWhicheverWriteFails() throws {
        func run(cutAt: Int64) throws -> (committed: Bool, operations: Int64, path: String) {
            let directory = TestPaths.temporaryDirectory()
            let path = directory.appendingPathComponent("wal.sqlite").path
            var db: OpaquePointer?
            #expect(sluice_wal_vfs_register() == SQLITE_OK)
            // The files are tracked from their opening; the count and the
            // cut start after the setup.
            #expect(sluice_testvfs_start(directory.path, 0) == 0)
            #expect(
                sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, SLUICE_WAL_VFS_NAME) == SQLITE_OK
            )
            for sql in [
                "PRAGMA page_size=1024", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA cache_size=8",
                "PRAGMA wal_autocheckpoint=0", "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)",
                "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 50) INSERT INTO t SELECT v, hex(zeroblob(150)) FROM s",
            ] {
                #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
            }
            #expect(sluice_testvfs_start(directory.path, cutAt) == 0)
            var ok = sqlite3_exec(db, "BEGIN", nil, nil, nil) == SQLITE_OK
            ok =
                ok
                && sqlite3_exec(
                    db,
                    "WITH RECURSIVE s(v) AS (SELECT 51 UNION ALL SELECT v + 1 FROM s WHERE v < 250) INSERT INTO t SELECT v, hex(zeroblob(150)) FROM s",
                    nil, nil, nil) == SQLITE_OK
            ok = ok && sqlite3_exec(db, "UPDATE t SET b = 'x' || b WHERE a <= 120", nil, nil, nil) == SQLITE_OK
            let committed = ok && sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK
            if !committed { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
            let operations = sluice_testvfs_operations()
            sluice_testvfs_cut()
            sqlite3_close(db)
            #expect(sluice_testvfs_power_loss(1, 100, 0) == 0)
            return (committed, operations, path)
        }
        let whole = try run(cutAt: 0)
        #expect(whole.committed)
        #expect(whole.operations > 3)
        for cut in 1...whole.operations {
            let outcome = try run(cutAt: cut)
            let store = StoreReader(outcome.path)
            let expected = outcome.committed ? ["250", "120"] : ["50", "0"]
            #expect(
                store.rows("SELECT count(*), count(*) FILTER (WHERE b LIKE 'x%') FROM t").first ?? [] == expected,
                "cut at operation \(cut) of \(whole.operations), committed: \(outcome.committed)")
            #expect(store.value("PRAGMA integrity_check") == "ok", "cut at operation \(cut)")
        }
    }

    /// The model itself, with SQLite alone: a commit never synced is lost,
    /// and so is the WAL it created (its directory was never synced); a
    /// commit synced (`synchronous=FULL`) is kept.
    @Test(arguments: ["OFF", "FULL"]) func theVFSLosesWhatWasNotSynced(synchronous: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let path = directory.appendingPathComponent("model.sqlite").path
        #expect(sluice_testvfs_start(directory.path, 0) == 0)
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        for sql in [
            "PRAGMA journal_mode=WAL", "PRAGMA synchronous=\(synchronous)", "CREATE TABLE t (x)",
            "INSERT INTO t VALUES (1)",
        ] {
            #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
        }
        sluice_testvfs_cut()
        // Closing checkpoints nothing now: the power is off.
        sqlite3_close(db)
        #expect(sluice_testvfs_power_loss(1, 0, 0) == 0)
        if synchronous == "FULL" {
            #expect(StoreReader(path).value("SELECT count(*) FROM t") == "1")
        } else {
            // Switching to WAL synced a rollback journal and its directory:
            // the database file is there, without the table.
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(StoreReader(path).value("SELECT count(*) FROM t") == "error: no such table: t")
        }
    }

    /// Resumes the run cut short in `store`: the store must then equal
    /// `expected`. When the cut came before the run was recorded (nothing
    /// of it survived), the resume may refuse (the checkpoint left is the
    /// previous run's, of another file); a run without `--resume` must then
    /// give `expected`.
    func resume(
        _ input: String, _ store: String, _ options: ImportOptions, _ expected: [[[String?]]], mayRefuse: Bool,
        _ context: String
    ) throws {
        var resuming = options
        resuming.resume = true
        do {
            try run(input, into: store, resuming)
        } catch ImportError.usage(let message) where mayRefuse && message.contains("cannot resume") {
            try run(input, into: store, options)
        }
        check(store, expected, "\(context), resumed")
    }

    /// The store is sound, holds `expected` row for row, and its last run
    /// is completed with its seen keys dropped.
    func check(_ store: String, _ expected: [[[String?]]], _ context: String) {
        let reader = StoreReader(store)
        #expect(reader.value("PRAGMA integrity_check") == "ok", "\(context)")
        let rows = dump(store)
        #expect(
            rows == expected,
            "\(context): the store differs, \(rows.map(\.count)) rows against \(expected.map(\.count))")
        let statuses = reader.rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
        #expect(statuses.last == "completed", "\(context): runs \(statuses)")
        #expect(
            reader.value("SELECT count(*) FROM sqlite_schema WHERE name LIKE '\\_sluice\\_seen%' ESCAPE '\\'") == "0",
            "\(context)")
    }

    func run(
        _ input: String, into store: String, _ options: ImportOptions,
        progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) throws {
        _ = try Importer(mapping: Mapping.parse(yaml: Self.mapping), store: store, options: options).runBlocking(
            inputs: [input], progress: progress)
    }

    /// A copy of `base` (or no file, when there is none) beside it.
    func store(copying base: String, named name: String) throws -> String {
        let path = URL(fileURLWithPath: base).deletingLastPathComponent().appendingPathComponent("\(name).sqlite").path
        if FileManager.default.fileExists(atPath: base) { try FileManager.default.copyItem(atPath: base, toPath: path) }
        return path
    }

    /// The runs in the ledger of `store` (0 when there is no store).
    func runs(_ store: String) -> Int { Int(StoreReader(store).value("SELECT count(*) FROM _sluice_runs") ?? "") ?? 0 }

    /// Every table's rows, the checkpoints included, sorted.
    func dump(_ store: String) -> [[[String?]]] {
        let reader = StoreReader(store)
        return ["Event", "Event_tags", "Tag", "_sluice_checkpoints"].map { table in
            reader.rows("SELECT * FROM \"\(table)\"").sorted { $0.description < $1.description }
        }
    }
}

/// The operation count at which each phase of a run began.
final class PhaseMarks: @unchecked Sendable {
    private let lock = NSLock()
    private var marks: [(phase: String, at: Int64)] = []

    func note(_ phase: ImportProgress.Phase) {
        let at = sluice_testvfs_operations()
        lock.withLock { if marks.last?.phase != phase.rawValue { marks.append((phase.rawValue, at)) } }
    }

    /// Each phase's operations (1-based), the last one's through `total`;
    /// `starting` is what comes before the first report (opening the
    /// store, clearing checkpoints, recording the run).
    func ranges(total: Int64) -> [(phase: String, range: ClosedRange<Int64>)] {
        let marks = [(phase: "starting", at: Int64(0))] + lock.withLock { self.marks }
        return marks.indices.compactMap { index in
            let start = marks[index].at + 1
            let end = index + 1 < marks.count ? marks[index + 1].at : total
            return start <= end ? (marks[index].phase, start...end) : nil
        }
    }
}

/// A reader connection opened during a run and closed after it.
final class OpenReader: @unchecked Sendable {
    private let lock = NSLock()
    private var reader: StoreReader?

    /// Opens `store` and reads from it, which holds its shared lock.
    func open(_ store: String) {
        lock.withLock {
            guard reader == nil else { return }
            let opened = StoreReader(store)
            _ = opened.value("SELECT count(*) FROM sqlite_schema")
            reader = opened
        }
    }

    func close() { lock.withLock { reader = nil } }
}
