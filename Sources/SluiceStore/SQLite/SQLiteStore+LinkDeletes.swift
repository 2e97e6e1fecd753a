import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

/// The deletion of one source's rows of a link table (a change file's
/// deleted source, a source whose links differ), row by row by the table's
/// whole key.
///
/// A link table is `WITHOUT ROWID` and has triggers (the kept dangling
/// counts; the keys a change file writes): SQLite deletes the rows a
/// `DELETE … WHERE source = ?` matches in two passes, their keys first
/// gathered into an ephemeral index that it creates, fills and drops at
/// each run of the statement (about 28,000 instructions and two page
/// buffers zeroed, callgrind; 15,700 runs in the 2,000,000-event change
/// file). A `DELETE` by the whole key deletes its one row in one pass; the
/// same rows go, in the same key order, each firing the same triggers.
extension SQLiteStore {
    final class LinkDeletes {
        /// The key columns after the source's of the source's rows, in key order.
        private let read: SQLiteStatement
        /// One row, by its whole key.
        private let delete: SQLiteStatement
        /// The source's key columns, bound to parameters 1 to `width` of both statements.
        private let width: Int
        /// The key columns after them.
        private let rest: Int
        /// The values `read` returned, `rest` a row, copied before the
        /// first row is deleted; kept for the next source.
        private var values: [OpaquePointer] = []
        private let action: String
        private let path: String
        /// The insert that logs a source whose rows the deletes took, when
        /// the run logs the link table's written keys
        /// (``SQLiteStore/logWrittenSource(_:_:)``): set by
        /// ``SQLiteStore/linkDeletes(_:)`` at each use.
        var logsWritten: SQLiteStatement?

        /// Prepares the two statements of `link`, whose key is `key`
        /// (``SQLiteStore/linkKeyColumns(_:)``).
        init(_ connection: SQLiteConnection, _ link: LinkSchema, key: [String]) throws(StoreError) {
            width = link.sourceColumns.count
            rest = key.count - width
            let source = key[0..<width].enumerated().map { "\($0.element) = ?\($0.offset + 1)" }
            let whole = key.enumerated().map { "\($0.element) = ?\($0.offset + 1)" }
            let preparing = "preparing link deletes"
            read = try SQLiteStatement(
                connection,
                "SELECT \(key[width...].joined(separator: ", ")) FROM \(quoted(link.name)) WHERE "
                    + source.joined(separator: " AND ") + " ORDER BY \(key[width...].joined(separator: ", "))",
                preparing)
            delete = try SQLiteStatement(
                connection, "DELETE FROM \(quoted(link.name)) WHERE \(whole.joined(separator: " AND "))", preparing)
            action = "unlinking \(quoted(link.name))"
            path = connection.path
        }

        deinit { release() }

        /// Deletes the rows of the source whose key `bindSource` binds (to
        /// parameters 1 to the source's width of the statement it is
        /// handed), and logs the source when it had any and the run logs
        /// the table's written keys; returns how many. One descent to read
        /// them, one a row to delete it.
        func run(_ bindSource: (OpaquePointer) -> Void) throws(StoreError) -> Int {
            defer { release() }
            read.rewind()
            bindSource(read.handle)
            while try read.step(action) {
                for column in 0..<rest {
                    guard let value = sqlite3_value_dup(sqlite3_column_value(read.handle, Int32(column))) else {
                        read.rewind()
                        throw StoreError(
                            path: path, action: action, message: "out of memory copying a link's key",
                            sqliteCode: SQLITE_NOMEM)
                    }
                    values.append(value)
                }
            }
            read.rewind()
            var deleted = 0
            var start = 0
            while start < values.count {
                delete.rewind()
                bindSource(delete.handle)
                for column in 0..<rest {
                    sqlite3_bind_value(delete.handle, Int32(width + column + 1), values[start + column])
                }
                deleted += try delete.run(action)
                start += rest
            }
            if deleted > 0, let logsWritten { try SQLiteStore.logSource(with: logsWritten, bindSource) }
            return deleted
        }

        private func release() {
            for value in values { sqlite3_value_free(value) }
            values.removeAll(keepingCapacity: true)
        }
    }

    /// The deletes of `link`'s rows by source, prepared at its first use
    /// in the store's life.
    func linkDeletes(_ link: LinkSchema) throws(StoreError) -> LinkDeletes {
        let prepared: LinkDeletes
        if let cached = linkDeleteStatements[link.name] {
            prepared = cached
        } else {
            prepared = try LinkDeletes(connection, link, key: linkKeyColumns(link))
            linkDeleteStatements[link.name] = prepared
        }
        prepared.logsWritten = writtenSources[link.name]
        return prepared
    }
}
