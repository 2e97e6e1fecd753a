import Foundation
import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The WAL copied into the database file by the checkpointer's thread while
/// the store writes: bounded as SQLite's automatic checkpoint bounded it,
/// and every row in the file once the store closes.
@Suite struct SQLiteCheckpointerTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
    static let limit = 40

    /// Groups of 100 rows with 400-byte names: about 12 pages of 4 KiB a group.
    func write(groups: Int, walPages: Int) throws -> (walPeak: Int64, databaseBeforeClose: Int64) {
        var options = StoreOptions()
        options.pageSize = 4_096
        options.walCheckpointPages = walPages
        let store = try SQLiteStore(path: path, options: options)
        try store.prepare([schema])
        var walPeak: Int64 = 0
        for index in 0..<groups {
            let rows: [(Int64, String?, Int64?)] = (0..<100).map {
                (Int64(index * 100 + $0), String(repeating: "x", count: 400), Int64(index))
            }
            _ = try store.apply(group(rows))
            walPeak = max(walPeak, size(path + "-wal"))
        }
        let database = size(path)
        store.close()
        return (walPeak, database)
    }

    func size(_ file: String) -> Int64 {
        (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? 0
    }

    @Test func theWALStaysWithinItsLimitAndTheDatabaseFillsWhileTheStoreWrites() throws {
        let written = try write(groups: 200, walPages: Self.limit)
        // 200 groups write over 2,000 pages; the WAL started again at each
        // limit: at most the limit and the group that crossed it.
        let frame = Int64(4_096 + 24)
        #expect(written.walPeak <= Int64(Self.limit + 40) * frame + 32)
        #expect(written.walPeak > 0)
        // Copied while the store was open, not only by its close: about
        // 20,000 rows of 400 bytes.
        #expect(written.databaseBeforeClose > 4_000_000)
        #expect(size(path + "-wal") == 0)
        let reader = StoreReader(path)
        #expect(reader.count("T") == 20_000)
        #expect(reader.value("PRAGMA integrity_check") == "ok")
    }

    @Test func eachPassStartsTheWritebackOfTheFileAndTheWAL() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("PRAGMA journal_mode=WAL", "test")
        try writer.execute("CREATE TABLE T (a INTEGER PRIMARY KEY, b TEXT)", "test")
        let checkpointer = try #require(try SQLiteCheckpointer(path: path, limitPages: Self.limit))
        checkpointer.install(on: writer)
        // 30 commits of about 12 pages: a pass each 5 pages of WAL, so one
        // after every commit but those that wait at the limit's.
        for _ in 0..<30 {
            try writer.execute(
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100) "
                    + "INSERT INTO T (b) SELECT hex(randomblob(200)) FROM n", "test")
        }
        checkpointer.stop()
        writer.close()
        // Two files a pass, each started once it was open.
        #expect(checkpointer.writebacksStarted >= 2 * 20)
        #expect(checkpointer.writebacksStarted % 2 == 0)
        #expect(StoreReader(path).count("T") == 3_000)
    }

    @Test func noCheckpointBeforeTheCloseWithWALCheckpointZero() throws {
        let written = try write(groups: 50, walPages: 0)
        // 5,000 rows: every page still in the WAL until the close copied it.
        #expect(written.walPeak > 400 * 4_096)
        #expect(written.databaseBeforeClose < 100 * 4_096)
        #expect(size(path + "-wal") == 0)
        #expect(StoreReader(path).count("T") == 5_000)
    }
}
