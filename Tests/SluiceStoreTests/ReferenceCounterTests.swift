import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The SQLite store's reference counter, a read-only connection of its own.
@Suite struct ReferenceCounterTests {
    /// SQLite checkpoints the WAL into the file only when the last
    /// connection closes, and a read-only one cannot: the store's must close
    /// last, whichever its owner lets go of first.
    @Test func theStoreClosesAfterItsCounterAndCheckpointsTheLog() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        var store: SQLiteStore? = try SQLiteStore(path: path)
        try store?.prepare([schema])
        _ = try store?.apply(group([(1, "a", nil), (2, "b", 2)]))
        var counter = store?.makeReferenceCounter()
        #expect(try counter?.references(of: schema) == [])
        store = nil
        #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the store closed before its counter")
        counter = nil
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the log was not checkpointed")
        #expect(StoreReader(path).value("SELECT count(*) FROM T") == "2")
    }
}
