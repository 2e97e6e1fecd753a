import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// Each store maps its own codes to ``StoreError/Cause`` where it makes the
/// error, keeping the code (and its message) as it was.
@Suite struct StoreErrorCauseTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path

    @Test func aStoreAskedToStopIsInterrupted() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        store.shouldAbort = { true }
        let error = try #require(failure { () throws(StoreError) in _ = try store.apply(group([(1, "a", nil)])) })
        #expect(error.cause == .interrupted && error.isInterruption)
        // The shared group transaction (RowStore+Apply) makes it, with no
        // store's code: every store's cancellation reads the same.
        #expect(error.description == "\(path): committing a batch: cancelled")

        let null = NullStore()
        null.shouldAbort = { true }
        let dropped = try #require(failure { () throws(StoreError) in _ = try null.apply(group([(1, "a", nil)])) })
        #expect(dropped.cause == .interrupted && dropped.isInterruption)
        #expect(dropped.description == "null:: committing a batch: cancelled")
    }

    @Test func aRepeatedKeyIsAConstraint() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("CREATE TABLE t (x INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)", "filling")
        let error = try #require(
            failure { () throws(StoreError) in
                try connection.execute("INSERT INTO t VALUES (1)", "inserting")
            })
        #expect(error.cause == .constraint)
        #expect(error.code == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(error.description.hasSuffix("inserting: UNIQUE constraint failed: t.x (SQLite code 1555)"))
    }

    @Test func aStoreAnotherConnectionWritesIsBusy() throws {
        let writer = try SQLiteConnection(path: path)
        try writer.execute("BEGIN IMMEDIATE", "taking the write lock")
        let other = try SQLiteConnection(path: path)
        let error = try #require(
            failure { () throws(StoreError) in
                try other.execute("BEGIN IMMEDIATE", "taking the write lock")
            })
        #expect(error.cause == .busy)
        #expect(error.code == 5)  // SQLITE_BUSY
        writer.rollback()
    }

    @Test func aFileThatCannotBeOpenedReadOrWritten() throws {
        #expect(
            failure { () throws(StoreError) in
                _ = try SQLiteStore(path: "/nonexistent-dir/x.sqlite")
            }?.cause == .cannotOpen)

        try Data("not a database, only text long enough to fill a header".utf8).write(to: URL(fileURLWithPath: path))
        let garbage = try SQLiteConnection(path: path)
        #expect(
            failure { () throws(StoreError) in
                _ = try garbage.strings("SELECT count(*) FROM sqlite_schema", column: 0, "reading")
            }?.cause == .corrupt)

        let other = TestPaths.temporaryDirectory().appendingPathComponent("r.sqlite").path
        try SQLiteConnection(path: other).execute("CREATE TABLE t (x)", "creating")
        let reader = try SQLiteConnection(path: other, readOnly: true)
        #expect(
            failure { () throws(StoreError) in
                try reader.execute("INSERT INTO t VALUES (1)", "inserting")
            }?.cause == .readOnly)
    }

    /// The result codes no test can provoke cheaply (a full disk is
    /// DiskFullTests'), primary and extended.
    @Test func sqliteResultCodes() {
        let causes: [(Int32, StoreError.Cause)] = [
            (9, .interrupted), (5, .busy), (6, .busy), (13, .diskFull), (8, .readOnly), (11, .corrupt), (26, .corrupt),
            (19, .constraint), (787, .constraint), (10, .io), (10 | (4 << 8), .io), (14, .cannotOpen), (1, .other),
            (4, .other),
        ]
        for (code, cause) in causes { #expect(StoreError.Cause(sqliteCode: code) == cause, "\(code)") }
    }

    @Test func sqlStates() {
        let causes: [(String, StoreError.Cause)] = [
            ("57014", .interrupted), ("55P03", .busy), ("40P01", .busy), ("40001", .busy), ("53100", .diskFull),
            ("25006", .readOnly), ("XX001", .corrupt), ("XX002", .corrupt), ("23505", .constraint),
            ("23514", .constraint),
            ("58030", .io), ("08006", .connection), ("57P01", .connection), ("42P01", .other), ("53200", .other),
        ]
        for (state, cause) in causes { #expect(StoreError.Cause(sqlState: state) == cause, "\(state)") }
    }

    @Test func anUnreachableServerIsAConnectionFailure() {
        let error = failure { () throws(StoreError) in
            _ = try PostgresConnection("host=/nonexistent-dir port=1 dbname=x connect_timeout=2")
        }
        #expect(error?.cause == .connection)
        #expect(error?.code == 0 && error?.sqlState == nil)
    }
}
