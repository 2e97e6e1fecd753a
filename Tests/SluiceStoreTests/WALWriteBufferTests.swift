import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The store's connections gather their WAL writes (CSluiceSQLiteWAL): what
/// another connection or process finds in the WAL must be exactly what it
/// found when every frame went straight to the file.
@Suite struct WALWriteBufferTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("w.sqlite").path

    /// A writer through the store's VFS with a page cache of `pages`, its
    /// table `T` made.
    func writer(cachePages: Int = 2_000) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("PRAGMA page_size=4096", "test")
        try writer.execute("PRAGMA journal_mode=WAL", "test")
        try writer.execute("PRAGMA synchronous=NORMAL", "test")
        try writer.execute("PRAGMA cache_size=\(cachePages)", "test")
        // No checkpoint empties the WAL while a test reads it.
        try writer.execute("PRAGMA wal_autocheckpoint=0", "test")
        try writer.execute("CREATE TABLE IF NOT EXISTS T (a INTEGER PRIMARY KEY, b TEXT)", "test")
        return writer
    }

    /// Inserts rows `range` of 1,000-byte text: about a row a quarter page.
    func insert(_ range: Range<Int>, with writer: SQLiteConnection) throws {
        try writer.execute(
            "WITH RECURSIVE s(v) AS (SELECT \(range.lowerBound) UNION ALL SELECT v + 1 FROM s WHERE v < \(range.upperBound - 1)) "
                + "INSERT INTO T SELECT v, v || hex(zeroblob(500)) FROM s",
            "test")
    }

    /// `count(*)` and `sum(a)` of `T` through `connection`.
    func totals(_ connection: SQLiteConnection) throws -> [String] {
        try connection.strings("SELECT count(*) || ' ' || coalesce(sum(a), 0) FROM T", column: 0, "test")
    }

    /// What `totals` reads when `T` holds rows `0..<count`.
    func expected(_ count: Int) -> [String] { ["\(count) \(count * (count - 1) / 2)"] }

    @Test func readersFindEveryCommitWholeWhileTheWritesAreGathered() throws {
        let writer = try writer()
        // A reader of the default VFS (another program's) and one of the store's.
        let foreign = StoreReader(path)
        let own = try SQLiteConnection(path: path, readOnly: true)
        for commit in 1...40 {
            // 150 rows: about 38 pages, 160 KiB of frames, so each commit
            // writes a gathered block and ends with a part of one.
            try writer.execute("BEGIN", "test")
            try insert(((commit - 1) * 150)..<(commit * 150), with: writer)
            try writer.execute("COMMIT", "test")
            #expect(foreign.value("SELECT count(*) || ' ' || sum(a) FROM T") == expected(commit * 150).first)
            #expect(try totals(own) == expected(commit * 150))
        }
        // Every frame the WAL index counts is in the file.
        let frames = try #require(Int(try writer.strings("PRAGMA wal_checkpoint(PASSIVE)", column: 1, "test")[0]))
        let walBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(frames > 1_000)
        #expect(walBytes >= 32 + frames * (4_096 + 24))
        #expect(foreign.value("PRAGMA integrity_check") == "ok")
    }

    @Test func aRolledBackTransactionsGatheredFramesNeverReachTheWALOfTheNext() throws {
        // A page cache of 20 pages spills the transaction's pages into the
        // WAL long before it ends.
        let writer = try writer(cachePages: 20)
        try insert(0..<100, with: writer)
        try writer.execute("BEGIN", "test")
        try insert(100..<2_100, with: writer)
        try writer.execute("ROLLBACK", "test")
        // Another connection copies the WAL and empties it (it needs the
        // write lock the rollback released), then the writer starts it again.
        let other = try SQLiteConnection(path: path)
        #expect(try other.strings("PRAGMA wal_checkpoint(TRUNCATE)", column: 0, "test") == ["0"])
        try insert(100..<400, with: writer)
        #expect(try totals(other) == expected(400))
        writer.close()
        other.close()
        let reopened = StoreReader(path)
        #expect(reopened.value("SELECT count(*) || ' ' || sum(a) FROM T") == expected(400).first)
        #expect(reopened.value("PRAGMA integrity_check") == "ok")
    }
}
