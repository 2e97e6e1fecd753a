import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

/// The links of the sources a key-ordered apply deletes by key, deleted in
/// the link table's own batches instead of the source table's.
///
/// The source table's batches come before its link tables' in the
/// key-ordered apply; deleting a source's links with its row wrote each page
/// of the link table and its target index once for the deletions and again
/// for the changed sources' links (about 790 MB of the 3,255 MB the
/// 2,000,000-event change file moved through the kernel). Instead each
/// source deleted (and not written again in its batch) is held, by key, in a
/// table of the link (`_sluice_unlink_` and its name, written in the
/// transaction that deletes the row, so memory stays bounded at any number
/// of keys and a kill loses none), and each link batch first deletes the links of
/// the held sources up to its last source, in the batch's transaction, so
/// that the link table is walked once in key order. Those after the last
/// batch go at the end (``SQLiteStore/unlinkDeleted()``). The same rows go,
/// each firing the same triggers; the change file of 2,000,000 events moved
/// 2,318 MB through the WAL and its checkpoints against 3,255 MB
/// (docs/nightly-sync.md). Each batch deletes the held keys after the last
/// batch's bound and up to its own, so that every held key is reached once
/// in key order, and at least once whatever the order of the bounds.
/// A run killed or cancelled in between leaves the links of deleted
/// sources stored, with their keys held; whatever run comes next deletes
/// them first (``SQLiteStore/finishLeftUnlinks(_:)``).
extension SQLiteStore {
    final class DeferredUnlinks {
        /// Holds one source key, once.
        private let insert: SQLiteStatement
        /// Whether a source key is held.
        private let contains: SQLiteStatement
        /// The held keys up to a bound, in key order.
        private let upTo: SQLiteStatement
        /// The held keys after a bound and up to another, in key order.
        private let between: SQLiteStatement
        /// The first held keys, in key order, as many as a limit.
        private let first: SQLiteStatement
        /// The held keys after a bound, in key order, as many as a limit.
        private let after: SQLiteStatement
        private let width: Int
        /// The greatest key whose held sources' links are deleted: the keys
        /// stay held (a source this run deleted is told by them), and the
        /// next deletions start after it. Nil before the first.
        private var unlinkedThrough: [LinkValue]?
        /// Whether a key was ever held: a link whose sources this run
        /// deleted none costs its batches no statement.
        private(set) var holdsAny = false
        let table: String

        /// The table that holds `link`'s deleted sources, quoted.
        static func table(_ link: LinkSchema) -> String { quoted("_sluice_unlink_" + link.name) }

        /// Creates the table for `link`'s sources (empty: the run's
        /// ``SQLiteStore/prepare(_:links:)`` finished what a run before left)
        /// and prepares its statements.
        init(_ connection: SQLiteConnection, _ link: LinkSchema) throws(StoreError) {
            let width = link.sourceColumns.count
            self.width = width
            table = Self.table(link)
            let names = link.sourceColumns.map { quoted($0.name) }
            let columns = names.joined(separator: ", ")
            let definitions = link.sourceColumns.map { "\(quoted($0.name)) \($0.type.sqlType) NOT NULL" }
            let preparing = "preparing the deferred unlinks of \(quoted(link.name))"
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(table) (\(definitions.joined(separator: ", ")), "
                    + "PRIMARY KEY (\(columns))) WITHOUT ROWID",
                preparing)
            try connection.execute("DELETE FROM \(table)", preparing)
            func parameters(from first: Int) -> String {
                "(" + (first..<(first + width)).map { "?\($0)" }.joined(separator: ", ") + ")"
            }
            let match = names.enumerated().map { "\($0.element) = ?\($0.offset + 1)" }.joined(separator: " AND ")
            let select = "SELECT \(columns) FROM \(table)"
            let ordered = "ORDER BY \(columns)"
            insert = try SQLiteStatement(
                connection, "INSERT OR IGNORE INTO \(table) (\(columns)) VALUES \(parameters(from: 1))", preparing)
            contains = try SQLiteStatement(connection, "SELECT 1 FROM \(table) WHERE \(match)", preparing)
            upTo = try SQLiteStatement(
                connection, "\(select) WHERE (\(columns)) <= \(parameters(from: 1)) \(ordered)", preparing)
            between = try SQLiteStatement(
                connection,
                "\(select) WHERE (\(columns)) > \(parameters(from: 1)) "
                    + "AND (\(columns)) <= \(parameters(from: width + 1)) \(ordered)",
                preparing)
            first = try SQLiteStatement(connection, "\(select) \(ordered) LIMIT ?1", preparing)
            after = try SQLiteStatement(
                connection,
                "\(select) WHERE (\(columns)) > \(parameters(from: 2)) \(ordered) LIMIT ?1", preparing)
        }

        /// Holds the source key `bindKey` binds (to parameters 1 to the
        /// source's width). One insert into the table.
        func hold(_ bindKey: (OpaquePointer) -> Void) throws(StoreError) {
            insert.rewind()
            bindKey(insert.handle)
            _ = try insert.run("holding a deleted source's key")
            holdsAny = true
        }

        /// Whether the source key `bindKey` binds is held: a source this run
        /// deleted. One descent of the table.
        func holds(_ bindKey: (OpaquePointer) -> Void) throws(StoreError) -> Bool {
            guard holdsAny else { return false }
            contains.rewind()
            defer { contains.rewind() }
            bindKey(contains.handle)
            return try contains.step("looking for a deleted source's key")
        }

        /// Deletes with `links` the links of every held source after the
        /// last one deleted and up to `bound` (a link batch's last source
        /// key, in key order); returns how many. One descent, then one a
        /// key and a link row.
        func unlink(through bound: [LinkValue], with links: LinkDeletes) throws(StoreError) -> Int {
            guard holdsAny else { return 0 }
            let read: SQLiteStatement
            if let lower = unlinkedThrough {
                read = between
                for (column, value) in (lower + bound).enumerated() { value.bind(read.handle, Int32(column + 1)) }
            } else {
                read = upTo
                for (column, value) in bound.enumerated() { value.bind(read.handle, Int32(column + 1)) }
            }
            defer { read.rewind() }
            let removed = try unlinkEach(read, with: links)
            unlinkedThrough = bound
            return removed
        }

        /// Deletes with `links` the links of the next `count` held sources
        /// after the last one deleted; returns how many, or nil when none
        /// was left.
        func unlinkNext(_ count: Int, with links: LinkDeletes) throws(StoreError) -> Int? {
            guard holdsAny else { return nil }
            let read: SQLiteStatement
            if let lower = unlinkedThrough {
                read = after
                for (column, value) in lower.enumerated() { value.bind(read.handle, Int32(column + 2)) }
            } else {
                read = first
            }
            sqlite3_bind_int64(read.handle, 1, Int64(count))
            defer { read.rewind() }
            var last: [LinkValue]?
            let removed = try unlinkEach(read, with: links) {
                last = (0..<Int32(width)).map { LinkValue(read.handle, $0) }
            }
            guard let last else { return nil }
            unlinkedThrough = last
            return removed
        }

        /// Steps `read`, which selects held keys, and deletes the links of
        /// each with `links`; `each` is called on the row of each key.
        private func unlinkEach(
            _ read: SQLiteStatement, with links: LinkDeletes, _ each: () -> Void = {}
        ) throws(StoreError) -> Int {
            var removed = 0
            let handle = read.handle
            let width = Int32(width)
            while try read.step("reading the deleted sources' keys") {
                removed += try links.run { statement in
                    for column in 0..<width {
                        sqlite3_bind_value(statement, column + 1, sqlite3_column_value(handle, column))
                    }
                }
                each()
            }
            return removed
        }
    }

    /// Deletes the links that a run killed or cancelled between its entity
    /// and link batches left of the sources it deleted (the keys it held,
    /// ``DeferredUnlinks``), but of a source stored again since, and drops
    /// what held them, in the schema transaction: every run on the store
    /// starts so, whatever its mapping or order, so no run builds on such
    /// links. One `DELETE` a link table whose keys are held (each row
    /// firing the link table's triggers); a lookup of the schema otherwise.
    /// Keys held for a link table this run's mapping lacks wait for a run
    /// that has it.
    func finishLeftUnlinks(_ links: [LinkSchema]) throws(StoreError) {
        let action = "deleting the links a stopped run left of the rows it deleted"
        for link in links {
            let table = DeferredUnlinks.table(link)
            let held = try connection.strings(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = "
                    + literal("_sluice_unlink_" + link.name), column: 0, action)
            guard !held.isEmpty else { continue }
            let columns = link.sourceColumns.map { quoted($0.name) }
            let standing = zip(link.sourceKeys, columns).map { "t.\(quoted($0)) = u.\($1)" }
            try connection.execute(
                "DELETE FROM \(quoted(link.name)) WHERE (\(columns.joined(separator: ", "))) IN "
                    + "(SELECT \(columns.map { "u.\($0)" }.joined(separator: ", ")) FROM \(table) u "
                    + "WHERE NOT EXISTS (SELECT 1 FROM \(quoted(link.sourceTable)) t "
                    + "WHERE \(standing.joined(separator: " AND "))))", action)
            try connection.execute("DROP TABLE \(table)", action)
        }
    }

    /// Deletes the links of the sources ``merge(_:_:into:)`` deleted by
    /// key in the link batches from now on (the key-ordered apply, whose
    /// link tables come after every entity table).
    package func unlinkLater() throws(StoreError) {
        deferredUnlinks = [:]
        for link in linkSchemas { deferredUnlinks[link.name] = try DeferredUnlinks(connection, link) }
        unlinkingLater = true
    }

    /// The held sources whose links one transaction of ``unlinkDeleted()``
    /// deletes: as many rows as the first batch into a table whose keys
    /// scatter, whose pages fit the page cache.
    static let unlinkedPerTransaction = 256

    /// Deletes the links of the held sources no link batch reached, in
    /// transactions of ``unlinkedPerTransaction`` sources, and stops
    /// holding them: the end of the key-ordered apply's link tables.
    /// ``shouldAbort`` is asked before each commit, as in ``apply(_:)``.
    package func unlinkDeleted() throws(StoreError) {
        unlinkingLater = false
        for link in linkSchemas {
            guard let deferred = deferredUnlinks[link.name] else { continue }
            let links = try linkDeletes(link)
            while true {
                try beginGroup()
                let removed: Int?
                do throws(StoreError) {
                    removed = try deferred.unlinkNext(Self.unlinkedPerTransaction, with: links)
                    if shouldAbort?() == true {
                        throw StoreError(
                            path: name, action: "deleting the links of deleted rows", message: "cancelled",
                            cause: .interrupted)
                    }
                    try commitGroup()
                } catch {
                    rollbackGroup()
                    throw error
                }
                guard let removed else { break }
                sideWrites.linksRemoved[link.name, default: 0] += removed
            }
            let table = deferred.table
            deferredUnlinks[link.name] = nil
            try connection.execute("DROP TABLE IF EXISTS \(table)", "dropping the deferred unlinks")
        }
    }
}
