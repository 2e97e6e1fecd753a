import CSluiceSQLite3

/// The run ledger: a row per import run, written when it starts and when it
/// ends, in the store itself.
extension SQLiteStore {
    private static let ledgerSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_runs (
          id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
          inputs TEXT NOT NULL, records INTEGER, counts TEXT, error TEXT, options TEXT, swept INTEGER NOT NULL DEFAULT 0)
        """
    /// Columns later versions added to the ledger, added to an older one.
    private static let ledgerAdditions = [("options", "options TEXT"), ("swept", "swept INTEGER NOT NULL DEFAULT 0")]
    private static let runColumns = "id, started, finished, status, inputs, records, counts, error, options, swept"
    private static let now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"

    /// Records the start of a run, durably (``durably(_:_:)``); runs still
    /// marked running (their process died) become `interrupted`. Returns
    /// the run's id.
    package func beginRun(inputs: [String], options: String) throws(StoreError) -> Int64 {
        DiskReserve(storePath: connection.path).create()
        try connection.execute(Self.ledgerSchema, "creating the run ledger")
        let columns = try connection.strings("PRAGMA table_info(_sluice_runs)", column: 1, "reading the run ledger")
        for (name, definition) in Self.ledgerAdditions where !columns.contains(name) {
            try connection.execute("ALTER TABLE _sluice_runs ADD COLUMN \(definition)", "extending the run ledger")
        }
        try connection.execute("UPDATE _sluice_runs SET status = 'interrupted' WHERE status = 'running'", "updating the run ledger")
        let statement = try SQLiteStatement(
            connection, "INSERT INTO _sluice_runs (started, status, inputs, options) VALUES (\(Self.now), 'running', ?, ?)", "recording the run")
        statement.bind(1, inputs.joined(separator: "\n"))
        statement.bind(2, options)
        try durably("recording the run") { () throws(StoreError) in try statement.run("recording the run") }
        return sqlite3_last_insert_rowid(connection.handle)
    }

    /// Runs `write`, one statement committing on its own, with
    /// `synchronous=FULL`: its commit syncs the WAL, and so every commit
    /// before it, which `synchronous=NORMAL` left in the page cache until
    /// the next WAL checkpoint. Costs one `fsync` of the WAL (and, the first
    /// time, of its directory). Used for the two ledger writes that bound a
    /// run: after a power loss the ledger still shows a run that started,
    /// and a run recorded as ended keeps its batches, its sweep and its
    /// dropped seen keys (docs/durability.md).
    private func durably(_ action: String, _ write: () throws(StoreError) -> Void) throws(StoreError) {
        try connection.execute("PRAGMA synchronous=FULL", action)
        defer { _ = try? connection.execute("PRAGMA synchronous=NORMAL", action) }
        try write()
    }

    package func lastRun(inputs: [String]) throws(StoreError) -> RunRecord? {
        guard try Self.hasLedger(connection) else { return nil }
        let statement = try SQLiteStatement(
            connection, "SELECT \(Self.runColumns) FROM _sluice_runs WHERE inputs = ? ORDER BY id DESC LIMIT 1", "reading the run ledger")
        statement.bind(1, inputs.joined(separator: "\n"))
        return try Self.runs(statement).first
    }

    /// Marks run `id` swept, inside the caller's transaction.
    func markSwept(_ id: Int64) throws(StoreError) {
        let statement = try SQLiteStatement(connection, "UPDATE _sluice_runs SET swept = 1 WHERE id = ?", "recording the sweep")
        statement.bind(1, id)
        try statement.run("recording the sweep")
    }

    /// Whether the store has a ledger with every column this version reads
    /// (a store written by an older sluice gets them with its next run).
    private static func hasLedger(_ connection: SQLiteConnection) throws(StoreError) -> Bool {
        let columns = try connection.strings("PRAGMA table_info(_sluice_runs)", column: 1, "reading the run ledger")
        return !columns.isEmpty && ledgerAdditions.allSatisfy { columns.contains($0.0) }
    }

    /// The runs `statement` (selecting ``runColumns``) gives.
    private static func runs(_ statement: SQLiteStatement) throws(StoreError) -> [RunRecord] {
        var runs: [RunRecord] = []
        while try statement.step("reading the ledger") {
            runs.append(RunRecord(
                id: statement.int64(0), started: statement.text(1), finished: statement.optionalText(2), status: statement.text(3),
                inputs: statement.text(4), records: statement.optionalText(5).flatMap { Int($0) },
                counts: statement.optionalText(6), error: statement.optionalText(7), options: statement.optionalText(8),
                swept: statement.int64(9) != 0))
        }
        return runs
    }

    /// Records the end of run `id` durably (``durably(_:_:)``) and removes
    /// the disk reserve; when the disk is full, removes the reserve first
    /// and tries again.
    package func finishRun(_ id: Int64, status: String, records: Int, counts: String, error message: String?) throws(StoreError) {
        let reserve = DiskReserve(storePath: connection.path)
        defer { reserve.remove() }
        do throws(StoreError) {
            try forgetOldRuns()
            try durably("recording the end of the run") { () throws(StoreError) in
                try recordEnd(id, status: status, records: records, counts: counts, error: message)
            }
        } catch where error.code & 0xFF == SQLITE_FULL {
            reserve.remove()
            try durably("recording the end of the run") { () throws(StoreError) in
                try recordEnd(id, status: status, records: records, counts: counts, error: message)
            }
        }
    }

    private func recordEnd(_ id: Int64, status: String, records: Int, counts: String, error: String?) throws(StoreError) {
        let statement = try SQLiteStatement(
            connection, "UPDATE _sluice_runs SET finished = \(Self.now), status = ?, records = ?, counts = ?, error = ? WHERE id = ?",
            "recording the end of the run")
        statement.bind(1, status)
        statement.bind(2, Int64(records))
        statement.bind(3, counts)
        statement.bind(4, error)
        statement.bind(5, id)
        try statement.run("recording the end of the run")
    }

    /// Reads the ledger, the checkpoints and the tables of the store at
    /// `path` without changing it.
    package static func status(path: String) throws(StoreError) -> StoreStatus {
        do {
            return try status(of: SQLiteConnection(path: path, readOnly: true))
        } catch where error.code & 0xFF == SQLITE_CANTOPEN {
            // A store on a read-only filesystem: SQLite cannot make the WAL's
            // shared-memory file there, but nothing can change the file either.
            return try status(of: SQLiteConnection(path: path, immutable: true))
        }
    }

    private static func status(of connection: SQLiteConnection) throws(StoreError) -> StoreStatus {
        var status = StoreStatus(runs: [], checkpoints: [], tables: [])
        let names = try connection.strings(
            // `_` is a wildcard in LIKE, and LIKE ignores letter case as SQLite's names do.
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                + "AND name NOT LIKE '\\_sluice\\_%' ESCAPE '\\' ORDER BY rowid",
            column: 0, "listing tables")
        for name in names {
            let count = try connection.strings("SELECT count(*) FROM \(quoted(name))", column: 0, "counting \(quoted(name))")
            status.tables.append((name, Int(count.first ?? "") ?? 0))
        }
        if try hasLedger(connection) {
            status.runs = try runs(SQLiteStatement(connection, "SELECT \(runColumns) FROM _sluice_runs ORDER BY id DESC", "reading the ledger"))
        } else if try !connection.strings("PRAGMA table_info(_sluice_runs)", column: 1, "reading the ledger").isEmpty {
            // An older ledger, read without changing the store.
            let statement = try SQLiteStatement(
                connection, "SELECT id, started, finished, status, inputs, records, counts, error, NULL, 0 FROM _sluice_runs ORDER BY id DESC",
                "reading the ledger")
            status.runs = try runs(statement)
        }
        // A store sluice did not make has no checkpoints to show.
        let hasCheckpoints = try !connection.strings(
            "SELECT name FROM sqlite_schema WHERE name = '_sluice_checkpoints'", column: 0, "reading checkpoints").isEmpty
        guard hasCheckpoints else { return status }
        let inputs = try connection.strings("SELECT input FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        let records = try connection.strings("SELECT records FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        let bytes = try connection.strings("SELECT bytes FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        for index in inputs.indices {
            status.checkpoints.append((inputs[index], Int(records[index]) ?? 0, Int64(bytes[index]) ?? 0))
        }
        return status
    }
}
