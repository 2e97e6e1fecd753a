import Foundation
import SluiceTestSupport
import Testing

/// The stores the kill tests run into: SQLite files, and PostgreSQL
/// databases of the tests' server (``RecordDigestTests/kinds``), read with
/// the same SQL (quoted names, as both accept).
extension SyncCrashTests {
    /// A new store of `kind` for a test that works in `directory`: a SQLite
    /// file there named `name`, or an empty database of the tests' server.
    func newStore(_ kind: RecordDigestTests.Kind, _ directory: URL, _ name: String) throws -> String {
        switch kind {
        case .sqlite: return directory.appendingPathComponent("\(name).sqlite").path
        case .postgres: return try PostgresTestServer.require().newDatabase()
        }
    }

    /// A new store holding what `base` holds, named after `name`: a copy of
    /// the SQLite file, or a database made from `base` as its template.
    func copy(of base: String, _ directory: URL, _ name: String) throws -> String {
        guard Self.isPostgres(base) else {
            let store = directory.appendingPathComponent("\(name).sqlite").path
            try FileManager.default.copyItem(atPath: base, toPath: store)
            return store
        }
        return try PostgresTestServer.require().copy(of: base, name)
    }

    /// Runs `kill` (a run into `store` killed when a poll says so) with a
    /// ``Poller`` of `store`, closes the poller, and waits until the killed
    /// run has left the store (PostgreSQL: its session ended), so that the
    /// next run finds no lock of it; returns what `kill` returns.
    func killing(_ store: String, _ kill: (Poller) throws -> Bool) throws -> Bool {
        let wasKilled = try kill(Poller(store))
        if Self.isPostgres(store) { try PostgresTestServer.require().waitForIdle(store) }
        return wasKilled
    }

    static func isPostgres(_ store: String) -> Bool { store.hasPrefix("host=") }

    /// The rows of `sql` in `store`, every value as text; an error comes
    /// back as one row holding its message (`error: …`).
    static func rows(_ store: String, _ sql: String) -> [[String?]] {
        isPostgres(store) ? PostgresReader(store).rows(sql) : StoreReader(store).rows(sql)
    }

    /// The number `sql` counts in `store`, 0 when it fails (its table is
    /// not there yet).
    static func number(_ store: String, _ sql: String) -> Int {
        let value = rows(store, sql).first?.first ?? nil
        return value.flatMap { Int($0) } ?? 0
    }

    /// The rows of entity table `table` in `store`.
    static func count(_ store: String, _ table: String) -> Int {
        number(store, "SELECT count(*) FROM \"\(table)\"")
    }

    /// How many of `store`'s tables have names beginning with `prefix`, as
    /// text (or the error that counting them gave).
    static func tables(_ store: String, _ prefix: String) -> String? {
        let pattern = prefix.replacingOccurrences(of: "_", with: "\\_") + "%"
        let sql =
            isPostgres(store)
            ? "SELECT count(*) FROM pg_class WHERE relname LIKE '\(pattern)'"
            : "SELECT count(*) FROM sqlite_schema WHERE name LIKE '\(pattern)' ESCAPE '\\'"
        return rows(store, sql).first?.first ?? nil
    }

    /// Reads a store while a run writes it, to find the moment to kill the
    /// run. For PostgreSQL one connection serves every poll (a connection a
    /// millisecond would start a server process each time), closed when the
    /// poller goes; for SQLite each poll opens the file, as a reader would.
    final class Poller {
        private let store: String
        private let postgres: PostgresReader?

        init(_ store: String) {
            self.store = store
            postgres = SyncCrashTests.isPostgres(store) ? PostgresReader(store) : nil
        }

        /// The first value of `sql`'s rows, nil when it fails.
        func value(_ sql: String) -> String? {
            let rows = postgres.map { $0.rows(sql) } ?? SyncCrashTests.rows(store, sql)
            let value = rows.first?.first ?? nil
            return value?.hasPrefix("error: ") == true ? nil : value
        }

        /// The number `sql` counts, 0 when it fails.
        func number(_ sql: String) -> Int { Int(value(sql) ?? "") ?? 0 }
    }
}
