import CSluiceSQLite3

/// The pages the store's transactions write, against its page cache.
extension SQLiteStore {
    /// The page cache in pages and the pages written to the WAL so far
    /// (`SQLITE_DBSTATUS_CACHE_WRITE`, which counts each frame written: at
    /// a commit, and again for each page spilled while the transaction ran
    /// and written again). O(1): no statement, one read of SQLite's counter.
    package func pageWrites() -> PageWrites? {
        var current: Int32 = 0
        var highest: Int32 = 0
        guard sqlite3_db_status(connection.handle, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 0) == SQLITE_OK
        else { return nil }
        return PageWrites(cachePages: cachePages, written: Int(current))
    }

    /// Those of `names` that exist and hold a row. One probe of each
    /// table's first page.
    package func cacheFittedTables(_ names: [String]) throws(StoreError) -> Set<String> {
        var holding: Set<String> = []
        for name in names {
            guard !(try storedColumnInfo(name)).isEmpty else { continue }
            let rows = try connection.strings(
                "SELECT count(*) FROM (SELECT 1 FROM \(quoted(name)) LIMIT 1)", column: 0, "probing \(quoted(name))")
            if rows.first != "0" { holding.insert(name) }
        }
        return holding
    }
}
