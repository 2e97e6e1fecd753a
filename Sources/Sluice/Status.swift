/// Reads what a store holds and its run ledger.
public enum Status {
    /// The tables, runs and checkpoints of the store at `store` (a SQLite
    /// file, or a PostgreSQL connection string), read-only. A run recorded as
    /// running whose process (in PostgreSQL, whose server session) is gone
    /// is given as `interrupted`; one whose process cannot be checked from
    /// here says why in `RunRecord.unverified`.
    ///
    /// - Throws: ``ImportError/input(_:)`` when the store does not exist,
    ///   ``ImportError/store(_:)`` when it cannot be read or is `null:`,
    ///   which keeps nothing to read.
    public static func read(store: String) throws(ImportError) -> StoreStatus {
        let target = StoreTarget(store)
        if let path = target.file {
            do {
                _ = try FileByteSource(path: path)
            } catch {
                throw .input(error)
            }
        }
        do {
            return try target.status()
        } catch {
            throw .store(error)
        }
    }

    /// `store` as it may be shown or recorded: the password of a PostgreSQL
    /// connection string, if any, replaced by `***`; a SQLite path as it is.
    public static func masked(store: String) -> String {
        StoreTarget(store).masked
    }
}
