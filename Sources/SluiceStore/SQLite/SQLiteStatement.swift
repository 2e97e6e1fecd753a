import CSluiceSQLite3

/// A prepared statement that owns its handle: finalised when the value goes
/// away, so no path can leak it. Binding and stepping throw ``StoreError``s
/// that carry the SQL.
final class SQLiteStatement {
    let sql: String
    let handle: OpaquePointer
    private let connection: SQLiteConnection

    /// Prepares `sql` on `connection`; `action` says what for in errors.
    init(_ connection: SQLiteConnection, _ sql: String, _ action: String) throws(StoreError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            var error = connection.error(action, code)
            error.sql = sql
            throw error
        }
        self.connection = connection
        self.sql = sql
        handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears the previous step and every binding.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Clears the previous step only, for a statement in a loop that binds
    /// every parameter again (clearing them too cost the link inserts of a
    /// 20,000-event import 5 M instructions, 0.2%, in callgrind).
    func rewind() { sqlite3_reset(handle) }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sluice_sqlite_transient())
    }
    /// Binds `value`, or NULL for nil.
    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }
    /// Binds the bytes of `value` as a BLOB (copied by SQLite).
    func bind(_ index: Int32, _ value: [UInt8]) {
        _ = value.withUnsafeBytes {
            sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), sluice_sqlite_transient())
        }
    }
    /// Binds `value`, or NULL for nil.
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    func step(_ action: String) throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        var error = connection.error(action, code)
        error.sql = sql
        sqlite3_reset(handle)
        throw error
    }

    /// Steps to the end, ignoring any rows; returns the rows it changed.
    @discardableResult
    func run(_ action: String) throws(StoreError) -> Int {
        while try step(action) {}
        return Int(sqlite3_changes(connection.handle))
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func text(_ column: Int32) -> String { sqlite3_column_text(handle, column).map { String(cString: $0) } ?? "" }
    /// The column's bytes (a BLOB's, or a text's), empty for NULL.
    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
    /// Calls `body` with the column's bytes in SQLite's own buffer (valid
    /// until the statement steps or resets: no copy), empty for NULL.
    func withBlob<Value, Failure>(
        _ column: Int32, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }
    /// Whether the column is NULL.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    /// The column's text, nil for NULL.
    func optionalText(_ column: Int32) -> String? { sqlite3_column_text(handle, column).map { String(cString: $0) } }
}
