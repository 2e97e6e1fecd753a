import CSluiceSQLite3

extension StoreError {
    /// An error of SQLite result code `code` (primary or extended), kept in
    /// ``code`` and mapped to its ``cause``.
    init(path: String, action: String, message: String, sqliteCode code: Int32) {
        self.init(path: path, action: action, message: message, cause: Cause(sqliteCode: code), code: code)
    }
}

extension StoreError.Cause {
    /// The cause SQLite result code `code` stands for, by its primary code
    /// (the low byte of an extended one).
    init(sqliteCode code: Int32) {
        switch code & 0xFF {
        case SQLITE_INTERRUPT: self = .interrupted
        case SQLITE_BUSY, SQLITE_LOCKED: self = .busy
        case SQLITE_FULL: self = .diskFull
        case SQLITE_READONLY: self = .readOnly
        case SQLITE_CORRUPT, SQLITE_NOTADB: self = .corrupt
        case SQLITE_CONSTRAINT: self = .constraint
        case SQLITE_IOERR: self = .io
        case SQLITE_CANTOPEN: self = .cannotOpen
        default: self = .other
        }
    }
}
