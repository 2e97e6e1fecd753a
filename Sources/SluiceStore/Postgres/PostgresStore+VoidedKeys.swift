import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Per-key voiding of the digest set in PostgreSQL (docs/record-digests.md,
/// "Other writers"): a run under another fingerprint (a change file under
/// its own mapping) logs the key of every row it inserts, updates or
/// deletes into `_sluice_voided_keys(tbl, k)` (`k` the key's cells as a
/// `jsonb` array), through three statement-level triggers on each table
/// its mapping writes (insert, update, delete), which fire only in a
/// session whose `sluice.voiding` is `on`, in the transaction of the write;
/// at its end the triggers are dropped and the set, valid again unless
/// another run of the ledger overlapped this one, keeps every unit but
/// those that produced a logged key, which the next run that skips parses.
/// Each statement that writes a table logs the distinct keys of the rows it
/// wrote (its transition table) with one insert, in such runs only; the
/// log is read, its duplicates dropped, by the next run that skips. (A row
/// trigger cost a PL/pgSQL call, a `to_jsonb` of the whole row and an insert
/// a row: 122,972 calls and 1.0–1.2 s of the server's 11–12 s in the
/// 2,000,000-event change file, docs/nightly-sync.md.)
extension PostgresStore {
    /// The prefix of the triggers' names, and of their functions'.
    private static let trigger = "_sluice_written"

    /// The events a logged table's triggers fire on, each with the
    /// transition table whose keys it logs: the written rows for an insert,
    /// the stored ones for an update or a delete.
    private static let events = [
        (event: "INSERT", rows: "NEW TABLE AS written"), (event: "UPDATE", rows: "OLD TABLE AS written"),
        (event: "DELETE", rows: "OLD TABLE AS written"),
    ]

    /// The statements that (re)make `table`'s triggers, each with a
    /// function of its own that appends the distinct keys of the rows its
    /// statement wrote.
    private static func writtenTriggers(_ table: WrittenTable) -> [String] {
        let key = table.keyColumns.map { "w.\(pgQuoted($0))" }.joined(separator: ", ")
        return events.flatMap { event in
            let name = pgQuoted("\(trigger)_\(event.event.lowercased())")
            let function = pgQuoted(pgInternalName("\(trigger)_\(event.event.lowercased())_", table.name))
            return [
                "CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $sluice$ BEGIN "
                    + "INSERT INTO _sluice_voided_keys (tbl, k) SELECT DISTINCT TG_TABLE_NAME, jsonb_build_array(\(key)) "
                    + "FROM written w; RETURN NULL; END $sluice$",
                "DROP TRIGGER IF EXISTS \(name) ON \(pgQuoted(table.name))",
                "CREATE TRIGGER \(name) AFTER \(event.event) ON \(pgQuoted(table.name)) REFERENCING \(event.rows) "
                    + "FOR EACH STATEMENT WHEN (current_setting('sluice.voiding', true) = 'on') "
                    + "EXECUTE FUNCTION \(function)()",
            ]
        }
    }

    package func startVoidingWrites(_ tables: [WrittenTable]) throws(StoreError) -> Bool {
        let action = "logging the keys the run writes"
        // A migrated column changed its stored values unlogged.
        guard migrations.isEmpty, try exists("_sluice_digest_state", action) else { return false }
        for table in tables where try !exists(pgQuoted(table.name), action) { return false }
        try withSchemaLock(action) { () throws(StoreError) in
            try connection.execute(Self.digestSchema, action)
            // The tables the set covers stay covered: the key of every row it writes is logged.
            try connection.execute("UPDATE _sluice_digest_state SET valid = false", action)
            for table in tables {
                // Dropped first, not replaced: `CREATE OR REPLACE TRIGGER` needs PostgreSQL 14.
                try connection.execute(Self.writtenTriggers(table).joined(separator: "; "), action)
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
            "SELECT count(*) FROM pg_trigger WHERE left(tgname, \(Self.trigger.count + 1)) = '\(Self.trigger)_' AND tgrelid = ANY (ARRAY["
                + tables.map { "to_regclass(\(pgLiteral(pgQuoted($0))))" }.joined(separator: ", ") + "])", action
        ).int(0, 0)
        let logged = try connection.execute("SELECT count(*) FROM _sluice_voided_keys", action).int(0, 0)
        try withSchemaLock(action) { () throws(StoreError) in try dropWrittenTriggers(action) }
        guard migrations.isEmpty, triggers == Self.events.count * tables.count, logged <= limit else { return false }
        try connection.execute(
            "UPDATE _sluice_digest_state SET valid = \(runID.map(Self.alone) ?? "true")", action)
        return true
    }

    /// Ends the log of written keys: the session stops logging and the
    /// triggers of every table of the current schema are dropped, with
    /// their functions, those of a run that did not end too (the row
    /// trigger `_sluice_written` of an earlier version as well; one catalog
    /// query, a statement a trigger), so that no later run pays for their
    /// check. Called under the schema lock.
    func dropWrittenTriggers(_ action: String) throws(StoreError) {
        if !voidingTables.isEmpty { try connection.execute("RESET sluice.voiding", action) }
        voidingTables = []
        let result = try connection.execute(
            "SELECT t.tgrelid::regclass::text, quote_ident(t.tgname), CASE WHEN "
                + "left(p.proname, \(Self.trigger.count + 1)) = '\(Self.trigger)_' THEN t.tgfoid::regprocedure::text END "
                + "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid "
                + "WHERE (t.tgname = '\(Self.trigger)' OR left(t.tgname, \(Self.trigger.count + 1)) = '\(Self.trigger)_') "
                + "AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())", action)
        var functions: Set<String> = []
        for row in 0..<result.rowCount {
            guard let table = result.value(row, 0), let trigger = result.value(row, 1) else { continue }
            try connection.execute("DROP TRIGGER IF EXISTS \(trigger) ON \(table)", action)
            if let function = result.value(row, 2) { functions.insert(function) }
        }
        for function in functions.sorted() { try connection.execute("DROP FUNCTION IF EXISTS \(function)", action) }
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
