import SluiceRecords

/// The run ledger, `sluice status` and the count of dangling links, in
/// PostgreSQL.
extension PostgresStore {
    /// The ledger. Its ids are the greatest id plus one, taken under the
    /// table's lock (``beginRun(inputs:options:resumeCommand:)``), not from a
    /// sequence: a database created from a template (PostgreSQL 15's
    /// `WAL_LOG` strategy) copies the template's sequence page with values
    /// it had cached but not logged, and after a crash the sequence came
    /// back behind the ledger's rows (the next run failed on a duplicate
    /// key). Ledgers an older sluice made keep their `bigserial` default,
    /// unused.
    private static let ledgerSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_runs (
          id bigint PRIMARY KEY, started timestamptz NOT NULL, finished timestamptz, status text NOT NULL,
          inputs text NOT NULL, records bigint, counts text, error text, backend integer);
        """
        + ledgerAdditions.map { "ALTER TABLE _sluice_runs ADD COLUMN IF NOT EXISTS \($0.name) \($0.definition)" }
        .joined(separator: ";\n")
    /// Columns later versions added to the ledger, added to an older one
    /// when a run begins: each with its type and what it reads as in a
    /// ledger that lacks it. The options a resume must repeat, whether the
    /// run swept, when the run's server process started (with its pid,
    /// `backend`, what tells whether that session is still the run's), and
    /// the command that resumes the run.
    private static let ledgerAdditions: [(name: String, definition: String, absent: String)] = [
        ("options", "text", absent: "NULL"), ("swept", "boolean NOT NULL DEFAULT false", "false"),
        ("backend_start", "timestamptz", "NULL::timestamptz"), ("resume_command", "text", "NULL"),
    ]
    private static func time(_ column: String) -> String {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
    }

    /// Whether the server session of ledger row `r` (its `backend` pid, and
    /// `backendStart`, an expression for when it started) still exists: a
    /// server restarted since, or a pid reused by a later session, is not
    /// taken for it. A session of another role whose start this one may
    /// not see counts by its pid alone.
    private static func sessionAlive(backendStart: String) -> String {
        "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.backend "
            + "AND (\(backendStart) IS NULL OR a.backend_start IS NULL OR a.backend_start = \(backendStart)))"
    }

    /// Records the start of a run with its options, its server session and
    /// `resumeCommand`; runs still marked running whose session is gone
    /// (their importer or the server died) become `interrupted`, while
    /// those of importers running now stay as they are. Holds the ledger's
    /// lock (`SHARE ROW EXCLUSIVE`: readers go on, other importers' ledger
    /// writes wait) for these two statements. Durably: the commit waits for
    /// the WAL to reach the disk, and so for every commit before it.
    /// Returns the run's id.
    package func beginRun(inputs: [String], options: String, resumeCommand: String?) throws(StoreError) -> Int64 {
        try withSchemaLock("creating the run ledger") { () throws(StoreError) in
            try connection.execute(Self.ledgerSchema, "creating the run ledger")
        }
        let action = "recording the run"
        try connection.begin(action)
        do throws(StoreError) {
            try connection.execute("SET LOCAL synchronous_commit TO on", action)
            try connection.execute("LOCK TABLE _sluice_runs IN SHARE ROW EXCLUSIVE MODE", action)
            try connection.execute(
                "UPDATE _sluice_runs r SET status = 'interrupted' WHERE status = 'running' AND NOT \(Self.sessionAlive(backendStart: "r.backend_start"))",
                "updating the run ledger")
            let id = try connection.strings(
                "INSERT INTO _sluice_runs (id, started, status, inputs, backend, backend_start, options, resume_command) "
                    + "SELECT coalesce(max(id), 0) + 1, clock_timestamp(), 'running', $1, pg_backend_pid(), "
                    + "(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()), $2, $3 FROM _sluice_runs RETURNING id",
                action, [inputs.joined(separator: "\n"), options, resumeCommand])
            try connection.commit(action)
            let run = Int64(id.first.flatMap { $0 } ?? "") ?? 0
            runID = run
            return run
        } catch {
            connection.rollback()
            throw error
        }
    }

    package func lastRun(inputs: [String]) throws(StoreError) -> RunRecord? {
        guard let columns = try Self.runColumns(connection) else { return nil }
        let result = try connection.execute(
            "SELECT \(columns) FROM _sluice_runs r WHERE inputs = $1 ORDER BY id DESC LIMIT 1",
            "reading the run ledger",
            [inputs.joined(separator: "\n")])
        return Self.runs(result).first
    }

    /// What ``runs(_:)`` selects from the ledger as the database has it,
    /// as `r` (a column an older sluice did not make reads as its `absent`
    /// value, without changing the ledger), or nil when there is no ledger.
    /// A run recorded as running whose server session is gone reads as
    /// `interrupted`.
    private static func runColumns(_ connection: PostgresConnection) throws(StoreError) -> String? {
        let present = Set(
            try connection.strings(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('_sluice_runs') AND attnum > 0 AND NOT attisdropped",
                "reading the run ledger"
            ).compactMap { $0 })
        guard !present.isEmpty else { return nil }
        let column = { (name: String) -> String in
            present.contains(name) ? "r.\(name)" : ledgerAdditions.first { $0.name == name }?.absent ?? "NULL"
        }
        let shown =
            "CASE WHEN status = 'running' AND NOT \(sessionAlive(backendStart: column("backend_start"))) THEN 'interrupted' ELSE status END"
        return "id, \(time("started")), \(time("finished")), \(shown), inputs, records, counts, error, "
            + "\(column("options")), \(column("swept")), \(column("resume_command"))"
    }

    /// The runs `result` (selecting ``runColumns(_:)``) holds.
    private static func runs(_ result: PostgresResult) -> [RunRecord] {
        (0..<result.rowCount).map { row in
            RunRecord(
                id: Int64(result.int(row, 0)), started: result.value(row, 1) ?? "", finished: result.value(row, 2),
                status: RunStatus(ledger: result.value(row, 3) ?? ""),
                inputs: result.value(row, 4) ?? "", records: result.value(row, 5).flatMap { Int($0) },
                counts: result.value(row, 6),
                error: result.value(row, 7), options: result.value(row, 8), swept: result.value(row, 9) == "t",
                resumeCommand: result.value(row, 10))
        }
    }

    package func finishRun(_ id: Int64, status: RunStatus, records: Int, counts: String, error message: String?)
        throws(StoreError)
    {
        try forgetOldRuns()
        try connection.commitDurably(
            "UPDATE _sluice_runs SET finished = clock_timestamp(), status = $1, records = $2, counts = $3, error = $4 WHERE id = $5",
            "recording the end of the run", [status.rawValue, String(records), counts, message, String(id)])
    }

    /// Reads the ledger, the checkpoints and the tables of the database
    /// `conninfo` names without changing them; a run recorded as running
    /// whose server session is gone reads as `interrupted`.
    package static func status(conninfo: String) throws(StoreError) -> StoreStatus {
        let connection = try PostgresConnection(conninfo == "postgresql:" || conninfo == "postgres:" ? "" : conninfo)
        var status = StoreStatus(runs: [], checkpoints: [], tables: [])
        let names = try connection.strings(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') "
                + "AND c.relname NOT LIKE '\\_sluice\\_%' ORDER BY c.oid", "listing tables")
        for case let name? in names {
            let count = try connection.strings("SELECT count(*) FROM \(pgQuoted(name))", "counting \(pgQuoted(name))")
            status.tables.append(TableRows(name: name, rows: Int(count.first.flatMap { $0 } ?? "") ?? 0))
        }
        status.digests = try digestStatus(connection)
        let exists = { (table: String) throws(StoreError) -> Bool in
            try connection.strings("SELECT to_regclass($1) IS NOT NULL", "reading the ledger", [table]).first == "t"
        }
        if let columns = try runColumns(connection) {
            status.runs = runs(
                try connection.execute("SELECT \(columns) FROM _sluice_runs r ORDER BY id DESC", "reading the ledger"))
        }
        if try exists("_sluice_checkpoints") {
            let checkpoints = try connection.execute(
                "SELECT input, records, bytes FROM _sluice_checkpoints ORDER BY input", "reading checkpoints")
            for row in 0..<checkpoints.rowCount {
                status.checkpoints.append(
                    InputCheckpoint(
                        input: checkpoints.value(row, 0) ?? "", records: checkpoints.int(row, 1),
                        bytes: Int64(checkpoints.int(row, 2))))
            }
        }
        return status
    }

    // MARK: - Dangling references

    package func danglingReferences(of schema: TableSchema) throws(StoreError) -> [DanglingCount] {
        try Self.danglingReferences(of: schema, connection)
    }

    package func danglingLinks(_ link: LinkSchema, to target: LinkTarget) throws(StoreError) -> Int {
        let column = pgQuoted(link.targetColumn.name)
        let which =
            target.value.isEmpty ? "" : "WHERE l.\(pgQuoted(LinkSchema.entityColumnName)) = \(pgLiteral(target.value)) "
        let count = try connection.strings(
            "SELECT coalesce(sum(n), 0) FROM (SELECT l.\(column) AS k, count(*) AS n FROM \(pgQuoted(link.name)) l \(which)"
                + "GROUP BY l.\(column)) g WHERE NOT EXISTS "
                + "(SELECT 1 FROM \(pgQuoted(target.table)) t WHERE t.\(pgQuoted(target.key)) = g.k)",
            "counting dangling links of \(pgQuoted(link.name))")
        return Int(count.first.flatMap { $0 } ?? "") ?? 0
    }

    /// Rows of `schema` whose reference names a key with no target row, per
    /// reference. One scan of the table per reference.
    static func danglingReferences(of schema: TableSchema, _ connection: PostgresConnection) throws(StoreError)
        -> [DanglingCount]
    {
        var result: [DanglingCount] = []
        for reference in schema.references {
            let column = pgQuoted(schema.columns[reference.column].name)
            let count = try connection.strings(
                "SELECT count(*) FROM \(pgQuoted(schema.name)) s WHERE s.\(column) IS NOT NULL AND NOT EXISTS "
                    + "(SELECT 1 FROM \(pgQuoted(reference.targetTable)) t WHERE t.\(pgQuoted(reference.targetKey)) = s.\(column))",
                "counting dangling references of \(pgQuoted(schema.name))")
            result.append(
                DanglingRelation.reference(schema, reference).count(Int(count.first.flatMap { $0 } ?? "") ?? 0))
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
