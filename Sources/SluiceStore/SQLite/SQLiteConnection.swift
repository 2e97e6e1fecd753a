import CSluiceSQLite3
import CSluiceSQLiteWAL
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One SQLite connection with the few helpers the store needs. Not
/// thread-safe: one thread at a time.
final class SQLiteConnection {
    let path: String
    private(set) var handle: OpaquePointer?
    /// Whether a dry run holds the connection: one transaction, begun by
    /// ``beginDryRun(_:)`` and rolled back by ``close()``, in which
    /// ``begin(_:)`` and ``commit(_:)`` are a savepoint and its release.
    private(set) var isDryRun = false

    /// Opens (creating if needed, unless `readOnly`) the database at `path`;
    /// `immutable` reads a file nothing can change (a read-only filesystem,
    /// where SQLite could not make the WAL's shared-memory file) without
    /// locks; `scratch` opens a private temporary database instead, which
    /// SQLite deletes when it closes (`path` still names it in messages).
    init(path: String, readOnly: Bool = false, immutable: Bool = false, scratch: Bool = false) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        var flags = readOnly || immutable ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        var name = scratch ? "" : path
        if immutable {
            flags |= SQLITE_OPEN_URI
            let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
            let hex = Array("0123456789ABCDEF")
            name =
                "file:"
                + path.utf8.map {
                    unreserved.contains($0) ? String(UnicodeScalar($0)) : "%\(hex[Int($0 >> 4)])\(hex[Int($0 & 15)])"
                }.joined()
                + "?immutable=1"
        }
        // Every connection opens through the VFS that gathers WAL writes
        // (CSluiceSQLiteWAL.h); without it, through the default one.
        let vfs = sluice_wal_vfs_register() == SQLITE_OK ? SLUICE_WAL_VFS_NAME : nil
        let code = sqlite3_open_v2(name, &db, flags | SQLITE_OPEN_NOMUTEX, vfs)
        handle = db
        if code != SQLITE_OK {
            var message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            // The operating system's reason (no such directory, permission denied…), which SQLite's message omits.
            if let db, case let reason = sqlite3_system_errno(db), reason != 0 {
                message += ": " + String(cString: strerror(reason))
            }
            sqlite3_close_v2(db)
            handle = nil
            throw StoreError(path: path, action: "opening the store", message: message, sqliteCode: code)
        }
        sqlite3_extended_result_codes(db, 1)
        _ = sluice_sqlite_db_config_flag(db, SQLITE_DBCONFIG_DEFENSIVE, 1)
    }

    deinit { close() }

    /// Closes the connection, finalising nothing: statements must be
    /// finalised first. A dry run's transaction is rolled back.
    func close() {
        if isDryRun, let handle, sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Starts the one transaction of a dry run, taking the write lock: every
    /// write after it stays in it, and ``close()`` rolls it back.
    func beginDryRun(_ action: String) throws(StoreError) {
        try execute("BEGIN IMMEDIATE", action)
        isDryRun = true
    }

    /// Starts a unit of work that commits as a whole: a write transaction,
    /// or in a dry run a savepoint (failing if the dry run's transaction
    /// ended, so that no later write could commit on its own).
    func begin(_ action: String) throws(StoreError) {
        guard isDryRun else { return try execute("BEGIN IMMEDIATE", action) }
        guard let handle, sqlite3_get_autocommit(handle) == 0 else {
            throw StoreError(
                path: path, action: action, message: "the dry run's transaction was rolled back",
                sqliteCode: SQLITE_ABORT)
        }
        try execute("SAVEPOINT sluice_unit", action)
    }

    /// Commits the unit ``begin(_:)`` started (in a dry run, releases the
    /// savepoint into the dry run's transaction).
    func commit(_ action: String) throws(StoreError) {
        try execute(isDryRun ? "RELEASE sluice_unit" : "COMMIT", action)
    }

    /// Rolls the unit ``begin(_:)`` started back; errors are ignored (SQLite
    /// may have rolled it back itself).
    func rollback() {
        _ = try? execute(isDryRun ? "ROLLBACK TO sluice_unit; RELEASE sluice_unit" : "ROLLBACK", "rolling back")
    }

    /// The error for the connection's last failure.
    func error(_ action: String, _ code: Int32) -> StoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "the store is closed"
        return StoreError(path: path, action: action, message: message, sqliteCode: code)
    }

    /// Runs SQL with no parameters and no result rows.
    func execute(_ sql: String, _ action: String) throws(StoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        if code != SQLITE_OK { throw error(action, code) }
    }

    /// The text values of the first column of `sql`'s rows.
    func strings(_ sql: String, column: Int32, _ action: String) throws(StoreError) -> [String] {
        let statement = try SQLiteStatement(self, sql, action)
        var values: [String] = []
        while try statement.step(action) { values.append(statement.text(column)) }
        return values
    }
}

/// `name` as an SQL identifier: in double quotes, inner quotes doubled.
func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// A column default as an SQL literal (NULL when there is none).
func sqlLiteral(_ value: DefaultValue?) -> String {
    switch value {
    case nil: return "NULL"
    case .integer(let number): return "\(number)"
    case .real(let number): return "\(number)"
    case .text(let text): return literal(text)
    }
}

/// `text` as an SQL string literal.
func literal(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
