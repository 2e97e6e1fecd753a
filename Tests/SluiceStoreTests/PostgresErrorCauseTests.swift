import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The PostgreSQL store's causes, from a server of the tests' own.
@Suite(
    .enabled(
        if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresErrorCauseTests {
    @Test func aRepeatedKeyIsAConstraint() throws {
        let connection = try PostgresConnection(try PostgresTestServer.require().newDatabase())
        try connection.execute("CREATE TABLE t (x integer PRIMARY KEY); INSERT INTO t VALUES (1)", "filling")
        let error = try #require(
            failure { () throws(StoreError) in
                try connection.execute("INSERT INTO t VALUES (1)", "inserting")
            })
        #expect(error.cause == .constraint && error.sqlState == "23505" && error.code == 0)
        #expect(error.description.contains("(SQLSTATE 23505)"))
    }

    /// A statement sent during a `COPY … TO STDOUT` makes libpq drop the
    /// copy's other rows: the copy fails rather than end as if it had sent
    /// them all (before, a reader of the record digests saw the first units
    /// only).
    @Test func aCopyCutShortFails() throws {
        let connection = try PostgresConnection(try PostgresTestServer.require().newDatabase())
        var rows = 0
        let error = try #require(
            failure { () throws(StoreError) in
                try connection.copyOut("COPY (SELECT generate_series(1, 3)) TO STDOUT (FORMAT binary)", "copying") {
                    (_) throws(StoreError) in
                    rows += 1
                    _ = try connection.execute("SELECT 1", "selecting")
                }
            })
        #expect(rows == 1 && error.cause == .connection, "\(rows) rows: \(error)")
        #expect(try connection.strings("SELECT 2", "selecting") == ["2"])
    }

    @Test func aCancelledStatementIsInterrupted() throws {
        // cancel() is the one call safe from another thread.
        nonisolated(unsafe) let connection = try PostgresConnection(try PostgresTestServer.require().newDatabase())
        let canceller = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            connection.cancel()
        }
        canceller.start()
        let error = try #require(
            failure { () throws(StoreError) in
                try connection.execute("SELECT pg_sleep(30)", "sleeping")
            })
        #expect(error.cause == .interrupted && error.isInterruption && error.sqlState == "57014")
    }

    @Test func aLockHeldByAnotherSessionIsBusy() throws {
        let database = try PostgresTestServer.require().newDatabase()
        let holder = try PostgresConnection(database)
        try holder.execute("CREATE TABLE t (x integer)", "creating")
        try holder.execute("BEGIN; LOCK TABLE t", "locking")
        let other = try PostgresConnection(database)
        try other.execute("BEGIN; SET LOCAL lock_timeout = '100ms'", "setting the lock timeout")
        let error = try #require(failure { () throws(StoreError) in try other.execute("LOCK TABLE t", "locking") })
        #expect(error.cause == .busy && error.sqlState == "55P03", "\(error)")
        try holder.execute("ROLLBACK", "unlocking")
    }
}
