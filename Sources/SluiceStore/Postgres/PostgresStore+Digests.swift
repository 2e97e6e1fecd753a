import SluiceBatching
import SluiceRecords

/// The record digests (docs/record-digests.md) in two tables of the
/// store's schema, beside its ledger: `_sluice_digest_state`, one row (the
/// secret, the fingerprint, whether the set is valid, how many units), and
/// `_sluice_units`, one row per unit of the last digest run, keyed by its
/// digest. `bytea` compares as bytes (`memcmp`, then length; no collation),
/// so `ORDER BY digest` is ``UnitDigest``'s order.
///
/// Several importers may write one database at once, and one that writes
/// while a digest run is under way changes rows that run's units describe:
/// the last save of a run marks the set valid only if no other run of the
/// ledger overlapped it.
extension PostgresStore {
    static let digestSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_digest_state (
          id integer PRIMARY KEY CHECK (id = 1), secret bytea NOT NULL, fingerprint text NOT NULL,
          valid boolean NOT NULL, units bigint NOT NULL);
        CREATE TABLE IF NOT EXISTS _sluice_units (
          digest bytea PRIMARY KEY, keys bytea NOT NULL, pinned boolean NOT NULL);
        CREATE TABLE IF NOT EXISTS _sluice_digest_covered (entity text PRIMARY KEY);
        CREATE TABLE IF NOT EXISTS _sluice_voided_keys (tbl text NOT NULL, k jsonb NOT NULL)
        """

    /// The temporary table a save copies its units into (`keys` NULL for a
    /// unit it removes), emptied by each commit.
    private static let unitStage = "pg_temp._sluice_units_stage"

    package var keepsDigests: Bool { true }

    /// The store's digest set, nil when it keeps none. Two small statements.
    package func digestSet() throws(StoreError) -> DigestSet? {
        let action = "reading the record digests"
        guard try exists("_sluice_digest_state", action) else { return nil }
        let state = try connection.execute(
            "SELECT encode(secret, 'hex'), fingerprint, valid, units FROM _sluice_digest_state WHERE id = 1", action)
        guard state.rowCount > 0 else { return nil }
        let covered =
            try exists("_sluice_digest_covered", action)
            ? try connection.strings("SELECT entity FROM _sluice_digest_covered", action).compactMap { $0 } : []
        return DigestSet(
            secret: Self.bytes(hex: state.value(0, 0) ?? ""), fingerprint: state.value(0, 1) ?? "",
            valid: state.value(0, 2) == "t", units: state.int(0, 3), covered: Set(covered))
    }

    /// Starts a run that keeps digests under `fingerprint` and `secret`:
    /// the set is marked invalid until the run's last
    /// ``saveUnits(_:removing:last:)``, so that a run stopped between its
    /// first write and its units' save leaves a set the next run does not
    /// trust; `fresh` empties the units kept and the keys voided (`TRUNCATE`)
    /// and drops the triggers of a run that logged its written keys
    /// (``startVoidingWrites(_:)``) and did not end. One transaction, under
    /// the schema lock (the tables are made on first use).
    package func startDigests(fingerprint: String, secret: [UInt8], fresh: Bool) throws(StoreError) {
        let action = "starting the record digests"
        try withSchemaLock(action) { () throws(StoreError) in
            try connection.execute(Self.digestSchema, action)
            if fresh {
                try connection.execute("TRUNCATE _sluice_units, _sluice_voided_keys", action)
                try dropWrittenTriggers(action)
            }
            try connection.execute("DELETE FROM _sluice_digest_covered", action)
            try connection.execute(
                "INSERT INTO _sluice_digest_state AS d (id, secret, fingerprint, valid, units) "
                    + "VALUES (1, decode($1, 'hex'), $2, false, 0) ON CONFLICT (id) DO UPDATE SET "
                    + "secret = excluded.secret, fingerprint = excluded.fingerprint, valid = false, "
                    + "units = CASE WHEN $3 THEN 0 ELSE d.units END", action,
                [Self.hex(secret), fingerprint, fresh ? "true" : "false"])
        }
    }

    /// Marks the digest set invalid (a run writes without keeping digests),
    /// so that the next run parses every unit. Nothing when there is none.
    package func voidDigests() throws(StoreError) {
        let action = "voiding the record digests"
        guard try exists("_sluice_digest_state", action) else { return }
        try connection.execute("UPDATE _sluice_digest_state SET valid = false", action)
        if try exists("_sluice_digest_covered", action) {
            try connection.execute("DELETE FROM _sluice_digest_covered", action)
        }
    }

    /// Records that the set covers `entities` (``DigestSet/covered``): a
    /// statement each, in one transaction.
    package func markCovered(_ entities: [String]) throws(StoreError) {
        let action = "recording the tables the record digests cover"
        guard !entities.isEmpty, try exists("_sluice_digest_covered", action) else { return }
        try connection.begin(action)
        do throws(StoreError) {
            for entity in entities {
                try connection.execute(
                    "INSERT INTO _sluice_digest_covered (entity) VALUES ($1) ON CONFLICT DO NOTHING", action, [entity])
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Units ``forEachUnit(_:)`` reads per statement.
    static let unitsPerRead = 10_000

    /// Calls `body` with each stored unit in digest order, read
    /// ``unitsPerRead`` at a time by a binary `COPY … TO STDOUT` of an index
    /// range (after the last digest read) and handed to `body` once that
    /// `COPY` ended, so that `body` may use the connection (a run that
    /// sweeps records skipped keys as seen from it: a statement sent during
    /// the `COPY` made libpq drop the rest of its rows). Memory: one read's
    /// units; a unit's keys are its own.
    package func forEachUnit(_ body: (StoredUnit) throws(StoreError) -> Void) throws(StoreError) {
        let action = "reading the record digests"
        guard try exists("_sluice_units", action) else { return }
        var units: [StoredUnit] = []
        repeat {
            let after = units.last.map { "WHERE digest > '\\x\(Self.hex($0.digest))'::bytea " } ?? ""
            units.removeAll(keepingCapacity: true)
            try connection.copyOut(
                "COPY (SELECT digest, keys, pinned FROM _sluice_units \(after)ORDER BY digest "
                    + "LIMIT \(Self.unitsPerRead)) TO STDOUT (FORMAT binary)", action
            ) { (row) throws(StoreError) in
                guard row.fieldCount() == 3, case let digest?? = row.field(), digest.count == 16,
                    case let keys?? = row.field(), case let pinned?? = row.field(), pinned.count == 1
                else {
                    throw StoreError(
                        path: name, action: action,
                        message: "a row of _sluice_units is not a unit sluice wrote; one run with --no-skip makes "
                            + "the digests anew", cause: .corrupt)
                }
                units.append(StoredUnit(digest: UnitDigest(bytes: digest), keys: Array(keys), pinned: pinned[0] != 0))
            }
            for unit in units { try body(unit) }
        } while units.count == Self.unitsPerRead
    }

    /// Deletes the units of `removed` and inserts (or replaces) those of
    /// `saved`, in one transaction: one binary `COPY` of both into a
    /// temporary table, one `DELETE` joined to it, one `INSERT … ON
    /// CONFLICT` in digest order. The `last` call of a run also marks the
    /// set valid, unless another run of the ledger overlapped this one, and
    /// forgets the voided keys (the run parsed every unit that produced one).
    package func saveUnits(_ saved: [StoredUnit], removing removed: [UnitDigest], last: Bool) throws(StoreError) {
        let action = "saving the record digests"
        try connection.begin(action)
        do throws(StoreError) {
            var change = 0
            if !saved.isEmpty || !removed.isEmpty {
                try stageUnits(saved, removed, action)
                if !removed.isEmpty {
                    change -= try connection.execute(
                        "DELETE FROM _sluice_units u USING \(Self.unitStage) s WHERE s.keys IS NULL "
                            + "AND u.digest = s.digest", action
                    ).affected
                }
                if !saved.isEmpty {
                    change += try connection.execute(
                        "WITH w AS (INSERT INTO _sluice_units (digest, keys, pinned) SELECT DISTINCT ON (digest) "
                            + "digest, keys, pinned FROM \(Self.unitStage) WHERE keys IS NOT NULL ORDER BY digest "
                            + "ON CONFLICT (digest) DO UPDATE SET keys = excluded.keys, pinned = excluded.pinned "
                            + "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM w", action
                    ).int(0, 0)
                }
            }
            try connection.execute(
                "UPDATE _sluice_digest_state SET units = units + $1"
                    + (last ? ", valid = \(runID.map(Self.alone) ?? "true")" : ""), action, [String(change)])
            if last { try connection.execute("DELETE FROM _sluice_voided_keys", action) }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Copies `saved` and the digests of `removed` into the unit stage.
    private func stageUnits(_ saved: [StoredUnit], _ removed: [UnitDigest], _ action: String) throws(StoreError) {
        try connection.execute(
            "CREATE TEMP TABLE IF NOT EXISTS _sluice_units_stage (digest bytea NOT NULL, keys bytea, pinned boolean) "
                + Self.emptiedAtCommit, action)
        // A dry run's savepoints commit nothing, so nothing empties it.
        if connection.isDryRun { try connection.execute("TRUNCATE \(Self.unitStage)", action) }
        try connection.copy("COPY \(Self.unitStage) (digest, keys, pinned) FROM STDIN (FORMAT binary)", action) {
            buffer in
            for digest in removed {
                buffer.beginRow(fields: 3)
                Self.field(digest, &buffer)
                buffer.null()
                buffer.null()
            }
            for unit in saved {
                buffer.beginRow(fields: 3)
                Self.field(unit.digest, &buffer)
                unit.keys.withUnsafeBufferPointer { buffer.field($0) }
                buffer.bool(unit.pinned)
            }
        }
    }

    /// Whether no run of the ledger but run `id` overlapped it: none began
    /// after it, none is still running, none finished after it began.
    static func alone(_ id: Int64) -> String {
        "NOT EXISTS (SELECT 1 FROM _sluice_runs r, _sluice_runs me WHERE me.id = \(id) AND r.id <> me.id "
            + "AND (r.id > me.id OR r.status = 'running' OR r.finished >= me.started))"
    }

    /// A digest's 16 bytes in hexadecimal, as `bytea` compares them.
    private static func hex(_ digest: UnitDigest) -> String {
        withUnsafeBytes(of: (digest.high.bigEndian, digest.low.bigEndian)) { hex(Array($0)) }
    }

    /// A digest's 16 bytes as a field.
    private static func field(_ digest: UnitDigest, _ buffer: inout CopyBuffer) {
        withUnsafeBytes(of: (digest.high.bigEndian, digest.low.bigEndian)) { raw in
            buffer.field(raw.bindMemory(to: UInt8.self))
        }
    }

    /// Whether table `name` exists in the connection's search path.
    func exists(_ name: String, _ action: String) throws(StoreError) -> Bool {
        try Self.exists(name, action, connection)
    }

    static func exists(
        _ name: String, _ action: String, _ connection: PostgresConnection
    ) throws(StoreError) -> Bool {
        try connection.strings("SELECT to_regclass($1) IS NOT NULL", action, [name]).first == "t"
    }

    /// What `sluice status` shows of the digest set on `connection`, nil
    /// when the database keeps none. One scan of the units.
    static func digestStatus(_ connection: PostgresConnection) throws(StoreError) -> DigestStatus? {
        let action = "reading the record digests"
        guard try exists("_sluice_digest_state", action, connection) else { return nil }
        let state = try connection.execute(
            "SELECT valid, (SELECT count(*) FROM _sluice_units), "
                + "(SELECT coalesce(sum(octet_length(digest) + octet_length(keys)), 0) FROM _sluice_units) "
                + "FROM _sluice_digest_state WHERE id = 1", action)
        guard state.rowCount > 0 else { return nil }
        return DigestStatus(units: state.int(0, 1), bytes: Int64(state.int(0, 2)), valid: state.value(0, 0) == "t")
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).map { $0 <= 57 ? $0 &- 48 : ($0 | 32) &- 87 }
        return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
