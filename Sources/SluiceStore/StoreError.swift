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
    /// What went wrong, whichever store it was: what sluice and its callers
    /// test, rather than a store's own codes. ``Cause/other`` for an error
    /// made by ``init(path:action:message:code:sql:sqlState:)``.
    public var cause: Cause = .other

    /// What went wrong, in sluice's terms: each store maps its own codes
    /// (SQLite's result codes, PostgreSQL's SQLSTATEs and connection state)
    /// to one of these where it makes the error.
    public enum Cause: Sendable, Equatable {
        /// The store stopped the statement because it was asked to (the
        /// run was cancelled: the store's `interrupt()` or `shouldAbort`, a
        /// cancel sent to the server).
        case interrupted
        /// Another connection holds a lock sluice needs (SQLite busy or
        /// locked, a PostgreSQL lock timeout, deadlock or serialization
        /// failure): trying again later may succeed.
        case busy
        /// The disk (or the server's) is full.
        case diskFull
        /// The store or the session may only be read.
        case readOnly
        /// The database file or an index is damaged, or is not a database.
        case corrupt
        /// A constraint refused a row (a key, a foreign key, a check).
        case constraint
        /// Reading or writing the disk failed.
        case io
        /// The store's file could not be opened or created.
        case cannotOpen
        /// The database server could not be reached, or the connection to
        /// it was lost or closed.
        case connection
        /// Anything else, sluice's own errors among them.
        case other
    }

    /// Creates an error whose cause is ``Cause/other``.
    public init(path: String, action: String, message: String, code: Int32, sql: String? = nil, sqlState: String? = nil)
    {
        self.path = path
        self.action = action
        self.message = message
        self.code = code
        self.sql = sql
        self.sqlState = sqlState
    }

    /// Creates an error of `cause`; `code` and `sqlState` are the store's
    /// own, when it has them.
    package init(
        path: String, action: String, message: String, cause: Cause, code: Int32 = 0, sql: String? = nil,
        sqlState: String? = nil
    ) {
        self.init(path: path, action: action, message: message, code: code, sql: sql, sqlState: sqlState)
        self.cause = cause
    }

    /// Whether the store stopped the statement because it was asked to
    /// (the run was cancelled: the store's `interrupt()` or `shouldAbort`).
    public var isInterruption: Bool { cause == .interrupted }

    /// `store.sqlite: creating table "Post": disk I/O error (SQLite code 10)`
    /// or `… (SQLSTATE 23505)`, followed by the statement when one failed.
    public var description: String {
        "\(path): \(action): \(message)" + (code != 0 ? " (SQLite code \(code))" : "")
            + (sqlState.map { " (SQLSTATE \($0))" } ?? "") + (sql.map { " in: \($0)" } ?? "")
    }
}
