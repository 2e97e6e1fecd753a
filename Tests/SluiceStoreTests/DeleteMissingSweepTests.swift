import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

@Suite struct DeleteMissingSweepTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("sweep.sqlite").path

    /// The sweep's probe of the seen keys must use their primary key: with
    /// an untyped seen-keys column it scanned the whole table for every
    /// stored row (200,000 stored, 100,000 seen: 498 s; now under a second
    /// in the nightly-sync benchmark).
    @Test(arguments: [AttributeType.integer, .string]) func probesTheSeenKeysByTheirPrimaryKey(type: AttributeType)
        throws
    {
        var keyed = schema
        keyed.columns[0].type = type
        keyed.deleteMissing = true
        let store = try SQLiteStore(path: path)
        try store.prepare([keyed])
        try store.startTrackingSeenKeys([keyed], resuming: false)
        _ = try store.apply(group([(1, "a", 1)], schema: keyed))
        let sweep = try SweepStatements(store, keyed, [])
        let plan = StoreReader(path).rows("EXPLAIN QUERY PLAN " + sweep.unseenRows).map { $0.last.flatMap { $0 } ?? "" }
        #expect(plan.contains { $0.hasPrefix("SEARCH s USING PRIMARY KEY") }, "\(plan)")
        #expect(!plan.contains { $0.contains("SCAN s") }, "\(plan)")
    }

    @Test func sweepsInChunksAndDeletesExactlyTheUnseenRows() throws {
        var swept = schema
        swept.deleteMissing = true
        let store = try SQLiteStore(path: path)
        try store.prepare([swept])
        let run = try store.beginRun(inputs: ["t"], options: "{}", resumeCommand: nil)
        let total = Int(SQLiteStore.sweepChunkRows) * 2 + 17
        _ = try store.apply(group((1...total).map { (Int64($0), "r\($0)", nil) }, schema: swept))
        try store.startTrackingSeenKeys([swept], resuming: false)
        _ = try store.apply(group((1...total).filter { $0 % 3 == 0 }.map { (Int64($0), "r\($0)", nil) }, schema: swept))
        #expect(try store.hasSeenKeys(swept))
        #expect(try store.deleteMissing(swept) == total - total / 3)
        try store.stopTrackingSeenKeys(run: run)
        let reader = StoreReader(path)
        #expect(reader.value("SELECT swept FROM _sluice_runs WHERE id = \(run)") == "1")
        #expect(reader.count("T") == total / 3)
        #expect(reader.value("SELECT count(*) FROM T WHERE id % 3 != 0") == "0")
    }
}
