import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Per-key voiding of the digest set in PostgreSQL (docs/record-digests.md,
/// "Other writers"): a run under another fingerprint (a change file under
/// its own mapping) logs the key of every row it inserts, updates or
/// deletes into `_sluice_voided_keys(tbl, k)` (`k` the key's cells as a
/// `jsonb` array), through a row trigger on each table its mapping writes
/// that fires only in a session whose `sluice.voiding` is `on`, in the
/// transaction of the write; at its end the triggers are dropped and the
/// set, valid again unless another run of the ledger overlapped this one,
/// keeps every unit but those that produced a logged key, which the next
/// run that skips parses. A row written costs the trigger's call and an
/// appended row, in such runs only; the log is read, its duplicates
/// dropped, by the next run that skips.
extension PostgresStore {
    /// The trigger each logged table gets (one name: a table has one).
    private static let trigger = "_sluice_written"

    /// The function the triggers call, with the table's key columns as
    /// arguments: appends the written (for an update or a delete, the
    /// stored) row's key.
    private static let logFunction = """
        CREATE OR REPLACE FUNCTION _sluice_log_written() RETURNS trigger LANGUAGE plpgsql AS $f$
        DECLARE r jsonb;
        BEGIN
          IF TG_OP = 'INSERT' THEN r := to_jsonb(NEW); ELSE r := to_jsonb(OLD); END IF;
          INSERT INTO _sluice_voided_keys (tbl, k)
            SELECT TG_TABLE_NAME, jsonb_agg(r -> c ORDER BY i) FROM unnest(TG_ARGV) WITH ORDINALITY AS a (c, i);
          RETURN NULL;
        END $f$
        """

    package func startVoidingWrites(_ tables: [WrittenTable]) throws(StoreError) -> Bool {
        let action = "logging the keys the run writes"
        // A migrated column changed its stored values unlogged.
        guard migrations.isEmpty, try exists("_sluice_digest_state", action) else { return false }
        for table in tables where try !exists(pgQuoted(table.name), action) { return false }
        try withSchemaLock(action) { () throws(StoreError) in
            try connection.execute(Self.digestSchema, action)
            // The tables the set covers stay covered: the key of every row it writes is logged.
            try connection.execute("UPDATE _sluice_digest_state SET valid = false", action)
            try connection.execute(Self.logFunction, action)
            for table in tables {
                let keys = table.keyColumns.map(pgLiteral).joined(separator: ", ")
                // Dropped first, not replaced: `CREATE OR REPLACE TRIGGER` needs PostgreSQL 14.
                try connection.execute(
                    "DROP TRIGGER IF EXISTS \(Self.trigger) ON \(pgQuoted(table.name)); "
                        + "CREATE TRIGGER \(Self.trigger) AFTER INSERT OR UPDATE OR DELETE ON \(pgQuoted(table.name)) "
                        + "FOR EACH ROW WHEN (current_setting('sluice.voiding', true) = 'on') "
                        + "EXECUTE FUNCTION _sluice_log_written(\(keys))", action)
            }
        }
        // The session's, not a transaction's: every later write of this connection logs.
        try connection.execute("SET sluice.voiding = on", action)
        voidingTables = tables.map(\.name)
        return true
    }

    package func keepDigests(voidingWritten limit: Int) throws(StoreError) -> Bool {
        let action = "voiding the keys the run wrote"
        let tables = voidingTables
        guard !tables.isEmpty else { return false }
        // Another run that ended meanwhile may have dropped them (it overlapped: the set stays invalid).
        let triggers = try connection.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgname = '\(Self.trigger)' AND tgrelid = ANY (ARRAY["
                + tables.map { "to_regclass(\(pgLiteral(pgQuoted($0))))" }.joined(separator: ", ") + "])", action
        ).int(0, 0)
        let logged = try connection.execute("SELECT count(*) FROM _sluice_voided_keys", action).int(0, 0)
        try withSchemaLock(action) { () throws(StoreError) in try dropWrittenTriggers(action) }
        guard migrations.isEmpty, triggers == tables.count, logged <= limit else { return false }
        try connection.execute(
            "UPDATE _sluice_digest_state SET valid = \(runID.map(Self.alone) ?? "true")", action)
        return true
    }

    /// Ends the log of written keys: the session stops logging and the
    /// trigger of every table of the current schema is dropped, those of a
    /// run that did not end too (one catalog query, a statement a trigger),
    /// so that no later run pays for their check. Called under the schema
    /// lock.
    func dropWrittenTriggers(_ action: String) throws(StoreError) {
        if !voidingTables.isEmpty { try connection.execute("RESET sluice.voiding", action) }
        voidingTables = []
        let tables = try connection.strings(
            "SELECT t.tgrelid::regclass::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                + "WHERE t.tgname = '\(Self.trigger)' "
                + "AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())", action)
        for case let table? in tables {
            try connection.execute("DROP TRIGGER IF EXISTS \(Self.trigger) ON \(table)", action)
        }
    }

    package func voidedKeys(limit: Int) throws(StoreError) -> [VoidedKey]? {
        let action = "reading the voided keys"
        guard try exists("_sluice_voided_keys", action) else { return [] }
        // One row per cell of each distinct key, in the key's order, read by
        // one binary `COPY` (a row in memory at a time).
        let sql = """
            COPY (SELECT v.n, v.tbl, jsonb_typeof(x.e), x.e #>> '{}' FROM (
                SELECT tbl, k, row_number() OVER () AS n FROM (SELECT DISTINCT tbl, k FROM _sluice_voided_keys) d
                LIMIT \(limit + 1)) v, jsonb_array_elements(v.k) WITH ORDINALITY AS x (e, i) ORDER BY v.n, x.i)
            TO STDOUT (FORMAT binary)
            """
        var voided: [VoidedKey] = []
        var key: (number: UInt64, table: String, cells: [(type: [UInt8], value: [UInt8])])?
        try connection.copyOut(sql, action) { (row) throws(StoreError) in
            guard row.fieldCount() == 4, case let number?? = row.field(), number.count == 8,
                case let table?? = row.field(), case let type?? = row.field(), case let value?? = row.field()
            else {
                throw StoreError(
                    path: name, action: action,
                    message: "a row of _sluice_voided_keys is not a key sluice wrote; one run with --no-skip makes "
                        + "the digests anew", cause: .corrupt)
            }
            let next = UInt64(bigEndian: number.loadUnaligned(as: UInt64.self))
            if key?.number != next {
                if let key { voided.append(Self.voidedKey(key.table, key.cells)) }
                key = (next, String(decoding: table, as: UTF8.self), [])
            }
            key?.cells.append((Array(type), Array(value)))
        }
        if let key { voided.append(Self.voidedKey(key.table, key.cells)) }
        return voided.count > limit ? nil : voided
    }

    /// The key of `table` whose cells are `cells` (each a `jsonb` value's
    /// type and text), in ``UnitKeys``' encoding: a number is the cell an
    /// integer key binds, a string the cell of a text key.
    private static func voidedKey(_ table: String, _ cells: [(type: [UInt8], value: [UInt8])]) -> VoidedKey {
        var row = RowArena(columnCount: max(1, cells.count))
        row.beginRow(ordinal: 0)
        for (column, cell) in cells.enumerated() {
            let text = String(decoding: cell.value, as: UTF8.self)
            if cell.type.elementsEqual("number".utf8), let integer = Int64(text) {
                row.set(column, .integer(integer))
            } else if cell.type.elementsEqual("number".utf8), let real = Double(text) {
                row.set(column, .real(real))
            } else {
                row.set(column, row.text(cell.value))
            }
        }
        return VoidedKey(table: table, key: UnitKeys.key(of: row, row: 0, columns: Array(cells.indices)))
    }
}
