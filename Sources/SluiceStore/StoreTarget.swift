#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store an import or `sluice status` names (`--into`, the status
/// argument), parsed once from the text given: the one place that tells a
/// file from a database server and from the null store, and the only code
/// outside the store folders that names a store's type.
package enum StoreTarget: Sendable, Equatable {
    /// `null:`: keeps nothing (``NullStore``).
    case null
    /// A PostgreSQL database: a `postgresql://` or `postgres://` URI,
    /// libpq's keyword form (`dbname=… host=…`), or `postgresql:` alone for
    /// the `PG*` environment variables; as given.
    case postgres(conninfo: String)
    /// Any other text: the path of a SQLite store.
    case sqlite(path: String)

    /// The parameter keywords of libpq's keyword form that may open a
    /// connection string (`dbname=site host=db`).
    static let conninfoKeywords: Set<Substring> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "service", "sslmode", "passfile",
        "application_name", "options", "connect_timeout",
    ]

    /// The target `text` names: ``null`` for `null:`, ``postgres(conninfo:)``
    /// for a `postgresql:` or `postgres:` URI or a first word `keyword=value`
    /// with one of libpq's keywords, else ``sqlite(path:)``.
    package init(_ text: String) {
        if text == NullStore.target {
            self = .null
        } else if text.hasPrefix("postgresql:") || text.hasPrefix("postgres:") {
            self = .postgres(conninfo: text)
        } else if let first = text.split(separator: " ").first, let equals = first.firstIndex(of: "="),
            Self.conninfoKeywords.contains(first[..<equals])
        {
            self = .postgres(conninfo: text)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// Opens the store (a SQLite store is created if missing). A `dryRun`
    /// store keeps every write in one transaction that closing it rolls
    /// back. Costs a connection (and for a server its round trips).
    package func open(options: StoreOptions, dryRun: Bool = false) throws(StoreError) -> any ImportStore {
        switch self {
        case .null: return NullStore()
        case .postgres(let conninfo): return try PostgresStore(conninfo: conninfo, options: options, dryRun: dryRun)
        case .sqlite(let path): return try SQLiteStore(path: path, options: options, dryRun: dryRun)
        }
    }

    /// The store's tables, run ledger and checkpoints, read without changing
    /// them (``StoreStatus``); the null store, which keeps none, is an error.
    package func status() throws(StoreError) -> StoreStatus {
        switch self {
        case .null:
            throw StoreError(
                path: NullStore.target, action: "reading the status", message: "the null store keeps nothing to show",
                code: 0)
        case .postgres(let conninfo): return try PostgresStore.status(conninfo: conninfo)
        case .sqlite(let path): return try SQLiteStore.status(path: path)
        }
    }

    /// The target as it may be shown or recorded: a PostgreSQL connection
    /// string with its password, if any, replaced by `***`; anything else as
    /// it was given.
    package var masked: String {
        switch self {
        case .null: return NullStore.target
        case .postgres(let conninfo): return PostgresStore.masked(conninfo)
        case .sqlite(let path): return path
        }
    }

    /// The path of a SQLite store; nil for a server database or the null
    /// store.
    package var file: String? {
        guard case .sqlite(let path) = self else { return nil }
        return path
    }

    /// Where the key-ordered apply spills sorted runs unless told: beside a
    /// SQLite store (the directory holding its path, `.` when it names
    /// none), else the temporary directory (`TMPDIR`, else /tmp).
    package var sortDirectory: String {
        guard let path = file else {
            return getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
