import CSluiceSQLite3

/// A failure of the store: it could not be opened, written or read.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store's path.
    public var path: String
    /// What sluice was doing, e.g. `creating table "Post"`.
    public var action: String
    /// The database's message.
    public var message: String
    /// SQLite's extended result code (0 when the error is sluice's own or
    /// PostgreSQL's).
    public var code: Int32
    /// The statement that failed, when one did.
    public var sql: String?
    /// PostgreSQL's SQLSTATE (`23505`, `57014`…), when the server sent one.
    public var sqlState: String?

    /// Creates an error.
    public init(path: String, action: String, message: String, code: Int32, sql: String? = nil, sqlState: String? = nil) {
        self.path = path
        self.action = action
        self.message = message
        self.code = code
        self.sql = sql
        self.sqlState = sqlState
    }

    /// Whether the store stopped the statement because it was asked to
    /// (``ImportStore/interrupt()``, ``ImportStore/shouldAbort``).
    public var isInterruption: Bool { code == StoreError.interruptedCode || sqlState == StoreError.queryCanceled }

    /// PostgreSQL's SQLSTATE for a statement cancelled on request.
    package static let queryCanceled = "57014"

    /// The code of an interruption, SQLite's, which every store uses.
    package static let interruptedCode = SQLITE_INTERRUPT

    /// `store.sqlite: creating table "Post": disk I/O error (SQLite code 10)`
    /// or `… (SQLSTATE 23505)`, followed by the statement when one failed.
    public var description: String {
        "\(path): \(action): \(message)" + (code != 0 ? " (SQLite code \(code))" : "")
            + (sqlState.map { " (SQLSTATE \($0))" } ?? "") + (sql.map { " in: \($0)" } ?? "")
    }
}

/// What one entity's batches did to its table.
public struct EntityCounts: Sendable, Equatable, Codable {
    /// New keys written.
    public var inserted = 0
    /// Known keys whose values changed.
    public var updated = 0
    /// Known keys whose values were all the same (nothing written).
    public var unchanged = 0
    /// Rows removed.
    public var deleted = 0
    /// Records not imported: filtered out, or missing their key under
    /// `missing-key: skip`.
    public var skipped = 0

    /// All zero.
    public init() {}

    /// Adds `other` to these counts.
    public mutating func add(_ other: EntityCounts) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        deleted += other.deleted
        skipped += other.skipped
    }
}
