/// Reads what a store holds and its run ledger.
public enum Status {
    /// The tables, runs and checkpoints of the store at `store` (a SQLite
    /// file, or a PostgreSQL connection string), read-only.
    ///
    /// - Throws: ``ImportError/input(_:)`` when the store does not exist,
    ///   ``ImportError/store(_:)`` when it cannot be read.
    public static func read(store: String) throws(ImportError) -> StoreStatus {
        if PostgresStore.isTarget(store) {
            do {
                return try PostgresStore.status(conninfo: store)
            } catch {
                throw .store(error)
            }
        }
        do {
            _ = try FileByteSource(path: store)
        } catch {
            throw .input(error)
        }
        do {
            return try SQLiteStore.status(path: store)
        } catch {
            throw .store(error)
        }
    }
}
