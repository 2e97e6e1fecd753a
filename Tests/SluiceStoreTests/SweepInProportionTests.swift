@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching
@testable import SluiceStore

/// A sweep in proportion to the change, in both stores: the keys of removed
/// units recorded (``ImportStore/markRemoved(_:)``) are the only rows the
/// sweep may delete, less those the run saw; and the entities a digest set
/// covers (``ImportStore/markCovered(_:)``) until a run starts or voids it.
@Suite struct SweepInProportionTests {
    /// A row of ``schema``'s key column alone for each of `ids`.
    func keys(_ ids: [Int]) -> RowArena {
        var keys = RowArena(columnCount: 1)
        for id in ids {
            var encoded: [UInt8] = []
            RowCoding.appendCell(.integer(Int64(id)), UnsafeBufferPointer(start: nil, count: 0), to: &encoded)
            _ = UnitKeys.appendKeyRow(encoded, columns: [0], to: &keys)
        }
        return keys
    }

    /// Rows 1…20 stored (10…20 in the scope `n = 7`); a run writes 11…15
    /// and records 2, 4, 12, 18 and 30 as the keys its sweep may delete:
    /// the sweep deletes 18 (2 and 4 are out of scope, 12 seen, 30 not
    /// stored), and the resumed sweep of a new connection finds the same.
    func sweepsAmongTheRemovedKeys(_ open: () throws -> any ImportStore) throws -> (Int, Int, Bool) {
        var swept = schema
        swept.deleteMissing = true
        swept.deleteScope = [(column: 1, test: .noneOf(["r2", "r4"]))]
        var store = try open()
        try store.prepare([swept], links: [])
        let run = try store.beginRun(inputs: ["t"], options: "{}", resumeCommand: nil)
        _ = try store.apply(group((1...20).map { (Int64($0), "r\($0)", nil) }, schema: swept))
        try store.startTrackingSeenKeys([swept], resuming: false)
        #expect(try !store.hasSeenKeys(swept))
        try store.markRemoved([(swept, keys([2, 4, 12, 18, 30]))])
        #expect(try store.hasSeenKeys(swept))
        _ = try store.apply(group((11...15).map { (Int64($0), "r\($0)", nil) }, schema: swept))
        // A kill here: the resumed run (a new connection) keeps the keys.
        store = try open()
        try store.prepare([swept], links: [])
        try store.startTrackingSeenKeys([swept], resuming: true)
        #expect(try store.missingRows(swept) == MissingRows(missing: 1, stored: 20))
        let deleted = try store.deleteMissing(swept, links: [])
        try store.stopTrackingSeenKeys(run: run)
        let forgotten = try !store.hasSeenKeys(swept)
        return (deleted, try store.missingRows(swept).stored, forgotten)
    }

    @Test func sqlite() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("removed.sqlite").path
        let (deleted, stored, forgotten) = try sweepsAmongTheRemovedKeys { try SQLiteStore(path: path) }
        #expect(deleted == 1 && stored == 19 && forgotten)
        #expect(!StoreReader(path).rows("SELECT id FROM T").contains(["18"]))
    }

    /// The sweep in proportion walks a chunk of the removed keys by rowid
    /// and looks each one up in the table: it never scans the table.
    @Test func sqliteLooksUpEachRemovedKey() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("plan.sqlite").path
        var swept = schema
        swept.deleteMissing = true
        let store = try SQLiteStore(path: path)
        try store.prepare([swept])
        try store.startTrackingSeenKeys([swept], resuming: false)
        _ = try store.apply(group([(1, "a", 1)], schema: swept))
        try store.markRemoved([(swept, keys([1, 2]))])
        let sweep = try SweepStatements(store, swept, [], among: SQLiteStore.removedTable(swept.name))
        let plan = StoreReader(path).rows("EXPLAIN QUERY PLAN " + sweep.unseenRows).map { $0.last.flatMap { $0 } ?? "" }
        #expect(plan.contains { $0.hasPrefix("SEARCH r USING INTEGER PRIMARY KEY (rowid>") }, "\(plan)")
        #expect(plan.contains { $0.hasPrefix("SEARCH T") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN T") }, "\(plan)")
    }

    @Test(.enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started"))
    func postgres() throws {
        let database = try PostgresTestServer.require().newDatabase()
        let (deleted, stored, forgotten) = try sweepsAmongTheRemovedKeys { try PostgresStore(conninfo: database) }
        #expect(deleted == 1 && stored == 19 && forgotten)
        let kept = try PostgresConnection(database).strings("SELECT id FROM \"T\" WHERE id = 18", "reading")
        #expect(kept.isEmpty)
    }

    /// The covered entities come back with the set, and are forgotten by the
    /// start of the next digest run and by voiding.
    func coverage(_ store: any ImportStore) throws -> [Set<String>] {
        var seen: [Set<String>] = []
        try store.startDigests(fingerprint: "f", secret: Array(repeating: 1, count: 32), fresh: true)
        try store.saveUnits([], removing: [], last: true)
        try store.markCovered(["Event", "Actor"])
        seen.append(try store.digestSet()?.covered ?? ["none"])
        try store.startDigests(fingerprint: "f", secret: Array(repeating: 1, count: 32), fresh: false)
        seen.append(try store.digestSet()?.covered ?? ["none"])
        try store.saveUnits([], removing: [], last: true)
        try store.markCovered(["Event"])
        seen.append(try store.digestSet()?.covered ?? ["none"])
        try store.voidDigests()
        seen.append(try store.digestSet()?.covered ?? ["none"])
        return seen
    }

    @Test func sqliteCoverage() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("covered.sqlite").path
        #expect(try coverage(try SQLiteStore(path: path)) == [["Event", "Actor"], [], ["Event"], []])
    }

    @Test(.enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started"))
    func postgresCoverage() throws {
        let database = try PostgresTestServer.require().newDatabase()
        #expect(try coverage(try PostgresStore(conninfo: database)) == [["Event", "Actor"], [], ["Event"], []])
    }

    /// A change file (a run under another fingerprint that logs the keys it
    /// writes, ``ImportStore/startVoidingWrites(_:)``) keeps the tables the
    /// set covers, through its start and its end: every row it writes has
    /// its key voided, which the next run's sweep in proportion takes as a
    /// candidate. Returns the covered entities after its start and after its
    /// end, whether the set is valid again, and the keys voided.
    func coverageThroughAChangeFile(_ store: any ImportStore) throws -> ([Set<String>], Bool, [VoidedKey]) {
        try store.prepare([schema], links: [])
        let dump = try store.beginRun(inputs: ["dump"], options: "{}", resumeCommand: nil)
        try store.startDigests(fingerprint: "dump", secret: Array(repeating: 1, count: 32), fresh: true)
        _ = try store.apply(group([(1, "a", nil), (2, "b", nil)]))
        try store.saveUnits([], removing: [], last: true)
        try store.markCovered(["T"])
        try store.finishRun(dump, status: .completed, records: 2, counts: "{}", error: nil)
        var covered: [Set<String>] = []
        let run = try store.beginRun(inputs: ["changes"], options: "{}", resumeCommand: nil)
        #expect(try store.startVoidingWrites([WrittenTable(name: "T", keyColumns: ["id"])]))
        covered.append(try store.digestSet()?.covered ?? ["none"])
        _ = try store.apply(group([(3, "c", nil)]))
        #expect(try store.keepDigests(voidingWritten: 10))
        try store.finishRun(run, status: .completed, records: 1, counts: "{}", error: nil)
        covered.append(try store.digestSet()?.covered ?? ["none"])
        return (covered, try store.digestSet()?.valid == true, try store.voidedKeys(limit: 10) ?? [])
    }

    /// Key 3 in ``UnitKeys``' encoding, as a voided key of T.
    static let voidedThree = VoidedKey(
        table: "T",
        key: {
            var row = RowArena(columnCount: 1)
            row.beginRow(ordinal: 0)
            row.set(0, .integer(3))
            return UnitKeys.key(of: row, row: 0, columns: [0])
        }())

    @Test func sqliteCoverageThroughAChangeFile() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("changes.sqlite").path
        let (covered, valid, voided) = try coverageThroughAChangeFile(try SQLiteStore(path: path))
        #expect(covered == [["T"], ["T"]] && valid && voided == [Self.voidedThree])
    }

    @Test(.enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started"))
    func postgresCoverageThroughAChangeFile() throws {
        let database = try PostgresTestServer.require().newDatabase()
        let (covered, valid, voided) = try coverageThroughAChangeFile(try PostgresStore(conninfo: database))
        #expect(covered == [["T"], ["T"]] && valid && voided == [Self.voidedThree])
    }
}
