import CSluiceSQLite3
import SluiceBatching
import SluiceRecords

/// The record digests (docs/record-digests.md) in two tables of the store's
/// own: `_sluice_digest_state`, one row (the secret, the fingerprint,
/// whether the set is valid), and `_sluice_units`, one row per unit of the
/// last digest run, ordered by digest (WITHOUT ROWID) so that a run's join
/// reads it in the order its own digests sort.
extension SQLiteStore {
    private static let digestSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_digest_state (
          id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL, fingerprint TEXT NOT NULL,
          valid INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS _sluice_units (
          digest BLOB PRIMARY KEY, keys BLOB NOT NULL, pinned INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID
        """

    package var keepsDigests: Bool { true }

    /// The store's digest set, nil when it keeps none.
    package func digestSet() throws(StoreError) -> DigestSet? {
        let action = "reading the record digests"
        guard try tableExists("_sluice_digest_state") else { return nil }
        let state = try SQLiteStatement(
            connection,
            "SELECT secret, fingerprint, valid, (SELECT count(*) FROM _sluice_units) "
                + "FROM _sluice_digest_state WHERE id = 1", action)
        guard try state.step(action) else { return nil }
        return DigestSet(
            secret: state.blob(0), fingerprint: state.text(1), valid: state.int64(2) != 0, units: Int(state.int64(3)))
    }

    /// Starts a run that keeps digests under `fingerprint` and `secret`:
    /// the set is marked invalid until the run's last ``saveUnits(_:removing:last:)``,
    /// so that a run stopped between its first write and its units' save
    /// leaves a set the next run does not trust; `fresh` drops the units kept
    /// (a run that parses every unit). One transaction.
    package func startDigests(fingerprint: String, secret: [UInt8], fresh: Bool) throws(StoreError) {
        let action = "starting the record digests"
        try connection.begin(action)
        do throws(StoreError) {
            if fresh { try connection.execute("DROP TABLE IF EXISTS _sluice_units", action) }
            try connection.execute(Self.digestSchema, action)
            let state = try SQLiteStatement(
                connection,
                "INSERT OR REPLACE INTO _sluice_digest_state (id, secret, fingerprint, valid) "
                    + "VALUES (1, ?, ?, 0)", action)
            state.bind(1, secret)
            state.bind(2, fingerprint)
            try state.run(action)
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Marks the digest set invalid (a run writes without keeping digests),
    /// so that the next run parses every unit. Nothing when there is none.
    package func voidDigests() throws(StoreError) {
        guard try tableExists("_sluice_digest_state") else { return }
        try connection.execute("UPDATE _sluice_digest_state SET valid = 0", "voiding the record digests")
    }

    /// Calls `body` with each stored unit in digest order. One scan of the
    /// table; a unit's keys are valid only during its call.
    package func forEachUnit(_ body: (StoredUnit) throws(StoreError) -> Void) throws(StoreError) {
        let action = "reading the record digests"
        guard try tableExists("_sluice_units") else { return }
        let units = try SQLiteStatement(
            connection, "SELECT digest, keys, pinned FROM _sluice_units ORDER BY digest", action)
        while try units.step(action) {
            let digest = units.blob(0)
            guard digest.count == 16 else { continue }
            try body(
                StoredUnit(
                    digest: digest.withUnsafeBytes { UnitDigest(bytes: $0) }, keys: units.blob(1),
                    pinned: units.int64(2) != 0))
        }
    }

    /// Deletes the units of `removed` and inserts (or replaces) those of
    /// `saved`, in one transaction; the `last` call of a run also marks the
    /// set valid. O(units) statements on the digest's index.
    package func saveUnits(_ saved: [StoredUnit], removing removed: [UnitDigest], last: Bool) throws(StoreError) {
        let action = "saving the record digests"
        try connection.begin(action)
        do throws(StoreError) {
            let delete = try SQLiteStatement(connection, "DELETE FROM _sluice_units WHERE digest = ?", action)
            for digest in removed {
                delete.rewind()
                delete.bind(1, digest.bytes)
                try delete.run(action)
            }
            let insert = try SQLiteStatement(
                connection, "INSERT OR REPLACE INTO _sluice_units (digest, keys, pinned) VALUES (?, ?, ?)", action)
            for unit in saved {
                insert.rewind()
                insert.bind(1, unit.digest.bytes)
                insert.bind(2, unit.keys)
                insert.bind(3, Int64(unit.pinned ? 1 : 0))
                try insert.run(action)
            }
            if last { try connection.execute("UPDATE _sluice_digest_state SET valid = 1", action) }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// What `sluice status` shows of the digest set on `connection`, nil
    /// when the store keeps none. One scan of the units.
    static func digestStatus(_ connection: SQLiteConnection) throws(StoreError) -> DigestStatus? {
        let action = "reading the record digests"
        guard try tableExists("_sluice_digest_state", connection) else { return nil }
        let units = try tableExists("_sluice_units", connection)
        let state = try SQLiteStatement(
            connection,
            "SELECT valid, "
                + (units
                    ? "(SELECT count(*) FROM _sluice_units), "
                        + "(SELECT coalesce(sum(length(digest) + length(keys)), 0) FROM _sluice_units) "
                    : "0, 0 ")
                + "FROM _sluice_digest_state WHERE id = 1", action)
        guard try state.step(action) else { return nil }
        return DigestStatus(units: Int(state.int64(1)), bytes: state.int64(2), valid: state.int64(0) != 0)
    }

    private func tableExists(_ name: String) throws(StoreError) -> Bool {
        try Self.tableExists(name, connection)
    }

    private static func tableExists(_ name: String, _ connection: SQLiteConnection) throws(StoreError) -> Bool {
        try !connection.strings(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = \(literal(name))", column: 0,
            "reading the store's tables"
        ).isEmpty
    }
}
