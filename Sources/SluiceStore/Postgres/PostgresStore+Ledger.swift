import SluiceRecords

/// The run ledger, `sluice status` and the count of dangling links, in
/// PostgreSQL.
extension PostgresStore {
    private static let ledgerSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_runs (
          id bigserial PRIMARY KEY, started timestamptz NOT NULL, finished timestamptz, status text NOT NULL,
          inputs text NOT NULL, records bigint, counts text, error text, backend integer, options text,
          swept boolean NOT NULL DEFAULT false);
        ALTER TABLE _sluice_runs ADD COLUMN IF NOT EXISTS options text;
        ALTER TABLE _sluice_runs ADD COLUMN IF NOT EXISTS swept boolean NOT NULL DEFAULT false
        """
    private static let runColumns = "id, \(time("started")), \(time("finished")), status, inputs, records, counts, error, options, swept"
    private static func time(_ column: String) -> String { "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')" }

    /// Records the start of a run, durably (its commit waits for the WAL to
    /// reach the disk, and so for every commit before it); runs still
    /// marked running whose server process is gone (their importer died)
    /// become `interrupted`, while those of importers running now stay as
    /// they are.
    package func beginRun(inputs: [String], options: String) throws(StoreError) -> Int64 {
        try withSchemaLock("creating the run ledger") { () throws(StoreError) in
            try connection.execute(Self.ledgerSchema, "creating the run ledger")
        }
        try connection.execute(
            "UPDATE _sluice_runs SET status = 'interrupted' WHERE status = 'running' "
                + "AND backend IS DISTINCT FROM pg_backend_pid() AND backend NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)",
            "updating the run ledger")
        let id = try connection.commitDurably(
            "INSERT INTO _sluice_runs (started, status, inputs, backend, options) VALUES (clock_timestamp(), 'running', $1, pg_backend_pid(), $2) "
                + "RETURNING id",
            "recording the run", [inputs.joined(separator: "\n"), options])
        return Int64(id.first.flatMap { $0 } ?? "") ?? 0
    }

    package func lastRun(inputs: [String]) throws(StoreError) -> RunRecord? {
        let columns = try connection.strings(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('_sluice_runs') AND attname IN ('options', 'swept')",
            "reading the run ledger")
        guard columns.first == "2" else { return nil }
        let result = try connection.execute(
            "SELECT \(Self.runColumns) FROM _sluice_runs WHERE inputs = $1 ORDER BY id DESC LIMIT 1", "reading the run ledger",
            [inputs.joined(separator: "\n")])
        return Self.runs(result).first
    }

    /// The runs `result` (selecting ``runColumns``) holds.
    private static func runs(_ result: PostgresResult) -> [RunRecord] {
        (0..<result.rowCount).map { row in
            RunRecord(
                id: Int64(result.int(row, 0)), started: result.value(row, 1) ?? "", finished: result.value(row, 2), status: result.value(row, 3) ?? "",
                inputs: result.value(row, 4) ?? "", records: result.value(row, 5).flatMap { Int($0) }, counts: result.value(row, 6),
                error: result.value(row, 7), options: result.value(row, 8), swept: result.value(row, 9) == "t")
        }
    }

    package func finishRun(_ id: Int64, status: String, records: Int, counts: String, error message: String?) throws(StoreError) {
        try forgetOldRuns()
        try connection.commitDurably(
            "UPDATE _sluice_runs SET finished = clock_timestamp(), status = $1, records = $2, counts = $3, error = $4 WHERE id = $5",
            "recording the end of the run", [status, String(records), counts, message, String(id)])
    }

    /// Reads the ledger, the checkpoints and the tables of the database
    /// `conninfo` names without changing them.
    package static func status(conninfo: String) throws(StoreError) -> StoreStatus {
        let connection = try PostgresConnection(conninfo == "postgresql:" || conninfo == "postgres:" ? "" : conninfo)
        var status = StoreStatus(runs: [], checkpoints: [], tables: [])
        let names = try connection.strings(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') "
                + "AND c.relname NOT LIKE '\\_sluice\\_%' ORDER BY c.oid", "listing tables")
        for case let name? in names {
            let count = try connection.strings("SELECT count(*) FROM \(pgQuoted(name))", "counting \(pgQuoted(name))")
            status.tables.append((name, Int(count.first.flatMap { $0 } ?? "") ?? 0))
        }
        let exists = { (table: String) throws(StoreError) -> Bool in
            try connection.strings("SELECT to_regclass($1) IS NOT NULL", "reading the ledger", [table]).first == "t"
        }
        if try exists("_sluice_runs") {
            let current = try connection.strings(
                "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('_sluice_runs') AND attname IN ('options', 'swept')",
                "reading the ledger").first == "2"
            // An older ledger is read as it is, without changing it.
            let columns = current ? runColumns : "id, \(time("started")), \(time("finished")), status, inputs, records, counts, error, NULL, false"
            status.runs = runs(try connection.execute("SELECT \(columns) FROM _sluice_runs ORDER BY id DESC", "reading the ledger"))
        }
        if try exists("_sluice_checkpoints") {
            let checkpoints = try connection.execute("SELECT input, records, bytes FROM _sluice_checkpoints ORDER BY input", "reading checkpoints")
            for row in 0..<checkpoints.rowCount {
                status.checkpoints.append((checkpoints.value(row, 0) ?? "", checkpoints.int(row, 1), Int64(checkpoints.int(row, 2))))
            }
        }
        return status
    }

    // MARK: - Dangling references

    package func danglingReferences(
        _ schemas: [TableSchema], _ links: [LinkSchema], counted: [String: [DanglingCount]]
    ) throws(StoreError) -> [DanglingCount] {
        var result: [DanglingCount] = []
        for schema in schemas {
            if let known = counted[schema.name] {
                result += known
            } else {
                result += try Self.danglingReferences(of: schema, connection)
            }
        }
        for link in links {
            let target = pgQuoted(link.targetColumn.name)
            let targets = link.choices.isEmpty ? [("", link.targetTable, link.targetKey)] : link.choices.map { ($0.value, $0.table, $0.key) }
            var total = 0
            for (value, table, key) in targets {
                let which = value.isEmpty ? "" : "WHERE l.\(pgQuoted(LinkSchema.entityColumnName)) = \(pgLiteral(value)) "
                let count = try connection.strings(
                    "SELECT coalesce(sum(n), 0) FROM (SELECT l.\(target) AS k, count(*) AS n FROM \(pgQuoted(link.name)) l \(which)"
                        + "GROUP BY l.\(target)) g WHERE NOT EXISTS (SELECT 1 FROM \(pgQuoted(table)) t WHERE t.\(pgQuoted(key)) = g.k)",
                    "counting dangling links of \(pgQuoted(link.name))")
                total += Int(count.first.flatMap { $0 } ?? "") ?? 0
            }
            result.append(DanglingCount(name: link.name, count: total, policy: link.missing))
        }
        return result
    }

    /// Rows of `schema` whose reference names a key with no target row, per
    /// reference. One scan of the table per reference.
    static func danglingReferences(of schema: TableSchema, _ connection: PostgresConnection) throws(StoreError) -> [DanglingCount] {
        var result: [DanglingCount] = []
        for reference in schema.references {
            let column = pgQuoted(schema.columns[reference.column].name)
            let count = try connection.strings(
                "SELECT count(*) FROM \(pgQuoted(schema.name)) s WHERE s.\(column) IS NOT NULL AND NOT EXISTS "
                    + "(SELECT 1 FROM \(pgQuoted(reference.targetTable)) t WHERE t.\(pgQuoted(reference.targetKey)) = s.\(column))",
                "counting dangling references of \(pgQuoted(schema.name))")
            result.append(DanglingCount(name: "\(schema.name).\(reference.name)", count: Int(count.first.flatMap { $0 } ?? "") ?? 0, policy: reference.missing))
        }
        return result
    }

    /// A second connection to the database, to count a finished entity's
    /// dangling references while this one writes the next tables.
    /// None in a dry run: another session would not see its writes.
    package func makeReferenceCounter() -> (any ReferenceCounter)? {
        guard !connection.isDryRun else { return nil }
        return try? PostgresReferenceCounter(conninfo: conninfo)
    }
}

/// Counts dangling references on a connection of its own (it sees what the
/// store committed before each count began).
package final class PostgresReferenceCounter: ReferenceCounter, @unchecked Sendable {
    private let connection: PostgresConnection

    init(conninfo: String) throws(StoreError) {
        connection = try PostgresConnection(conninfo)
    }

    package func references(of schema: TableSchema) throws(StoreError) -> [DanglingCount] {
        try PostgresStore.danglingReferences(of: schema, connection)
    }

    package func interrupt() { connection.cancel() }
}
