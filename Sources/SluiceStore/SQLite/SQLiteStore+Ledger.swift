import CSluiceSQLite3

/// The run ledger: a row per import run, written when it starts and when it
/// ends, in the store itself.
extension SQLiteStore {
    private static let ledgerSchema = """
        CREATE TABLE IF NOT EXISTS _sluice_runs (
          id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
          inputs TEXT NOT NULL, records INTEGER, counts TEXT, error TEXT, options TEXT, swept INTEGER NOT NULL DEFAULT 0)
        """
    /// Columns later versions added to the ledger, added to an older one
    /// when a run begins: each with its definition and what it reads as in
    /// a ledger that lacks it. The options a resume must repeat, whether the
    /// run swept, the process that ran the run (``ProcessIdentity``) and the
    /// command that resumes it.
    private static let ledgerAdditions: [(name: String, definition: String, absent: String)] = [
        ("options", "options TEXT", absent: "NULL"), ("swept", "swept INTEGER NOT NULL DEFAULT 0", "0"),
        ("pid", "pid INTEGER", "NULL"), ("host", "host TEXT", "NULL"), ("process_start", "process_start TEXT", "NULL"),
        ("resume_command", "resume_command TEXT", "NULL"),
    ]
    private static let now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"

    /// Records the start of a run with its options, this process's identity
    /// and `resumeCommand`; runs still marked running whose process is gone
    /// become `interrupted`, as do those an older sluice recorded (it kept
    /// no process identity and marked every running run interrupted), while
    /// those of live processes, and of processes on other hosts, stay as they
    /// are. Durably (``durably(_:_:)``). Returns the run's id.
    package func beginRun(inputs: [String], options: String, resumeCommand: String?) throws(StoreError) -> Int64 {
        DiskReserve(storePath: connection.path).create()
        var id: Int64 = 0
        // One transaction: two runs starting at once neither add a column twice nor judge each other half-recorded.
        try durably("recording the run") { () throws(StoreError) in
            try connection.execute("BEGIN IMMEDIATE", "starting the run ledger's transaction")
            do throws(StoreError) {
                try connection.execute(Self.ledgerSchema, "creating the run ledger")
                let columns = try connection.strings(
                    "PRAGMA table_info(_sluice_runs)", column: 1, "reading the run ledger")
                for addition in Self.ledgerAdditions where !columns.contains(addition.name) {
                    try connection.execute(
                        "ALTER TABLE _sluice_runs ADD COLUMN \(addition.definition)", "extending the run ledger")
                }
                try markDeadRunsInterrupted()
                let me = ProcessIdentity.current
                let statement = try SQLiteStatement(
                    connection,
                    "INSERT INTO _sluice_runs (started, status, inputs, options, pid, host, process_start, resume_command) "
                        + "VALUES (\(Self.now), 'running', ?, ?, ?, ?, ?, ?)",
                    "recording the run")
                statement.bind(1, inputs.joined(separator: "\n"))
                statement.bind(2, options)
                statement.bind(3, Int64(me.pid))
                statement.bind(4, me.host)
                statement.bind(5, me.start)
                statement.bind(6, resumeCommand)
                try statement.run("recording the run")
                id = sqlite3_last_insert_rowid(connection.handle)
                try connection.execute("COMMIT", "recording the run")
            } catch {
                _ = try? connection.execute("ROLLBACK", "rolling back the run ledger")
                throw error
            }
        }
        return id
    }

    /// Marks `interrupted` the runs recorded as running whose process is
    /// gone, and those an older sluice recorded. A check of each such
    /// process (``ProcessIdentity/liveness(from:)``).
    private func markDeadRunsInterrupted() throws(StoreError) {
        let running = try SQLiteStatement(
            connection, "SELECT id, pid, host, process_start FROM _sluice_runs WHERE status = 'running'",
            "reading the run ledger")
        var dead: [Int64] = []
        while try running.step("reading the run ledger") {
            if Self.identity(running, pid: 1, host: 2, start: 3)?.liveness() ?? .dead == .dead {
                dead.append(running.int64(0))
            }
        }
        guard !dead.isEmpty else { return }
        try connection.execute(
            "UPDATE _sluice_runs SET status = 'interrupted' WHERE id IN (\(dead.map(String.init).joined(separator: ", ")))",
            "updating the run ledger")
    }

    /// The identity in columns `pid`, `host` and `start` of the statement's
    /// row; nil when an older sluice recorded the run.
    private static func identity(_ row: SQLiteStatement, pid: Int32, host: Int32, start: Int32) -> ProcessIdentity? {
        guard !row.isNull(pid), let name = row.optionalText(host) else { return nil }
        return ProcessIdentity(
            host: name, pid: Int32(truncatingIfNeeded: row.int64(pid)), start: row.optionalText(start))
    }

    /// Runs `write`, which commits (one statement on its own, or a
    /// transaction it begins and commits), with
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
        guard let columns = try Self.runColumns(connection) else { return nil }
        let statement = try SQLiteStatement(
            connection, "SELECT \(columns) FROM _sluice_runs WHERE inputs = ? ORDER BY id DESC LIMIT 1",
            "reading the run ledger")
        statement.bind(1, inputs.joined(separator: "\n"))
        return try Self.runs(statement).first
    }

    /// Marks run `id` swept, inside the caller's transaction.
    func markSwept(_ id: Int64) throws(StoreError) {
        let statement = try SQLiteStatement(
            connection, "UPDATE _sluice_runs SET swept = 1 WHERE id = ?", "recording the sweep")
        statement.bind(1, id)
        try statement.run("recording the sweep")
    }

    /// What ``runs(_:)`` selects from the ledger as the store has it (a
    /// column an older sluice did not make reads as its `absent` value,
    /// without changing the store), or nil when there is no ledger.
    private static func runColumns(_ connection: SQLiteConnection) throws(StoreError) -> String? {
        let columns = try connection.strings("PRAGMA table_info(_sluice_runs)", column: 1, "reading the run ledger")
        guard !columns.isEmpty else { return nil }
        return "id, started, finished, status, inputs, records, counts, error, "
            + ledgerAdditions.map { columns.contains($0.name) ? $0.name : $0.absent }.joined(separator: ", ")
    }

    /// The runs `statement` (selecting ``runColumns(_:)``) gives; a run
    /// recorded as running whose process is gone reads as `interrupted`,
    /// and one whose process cannot be checked from here says why.
    private static func runs(_ statement: SQLiteStatement) throws(StoreError) -> [RunRecord] {
        var runs: [RunRecord] = []
        while try statement.step("reading the ledger") {
            var run = RunRecord(
                id: statement.int64(0), started: statement.text(1), finished: statement.optionalText(2),
                status: RunStatus(ledger: statement.text(3)),
                inputs: statement.text(4), records: statement.optionalText(5).flatMap { Int($0) },
                counts: statement.optionalText(6), error: statement.optionalText(7), options: statement.optionalText(8),
                swept: statement.int64(9) != 0, resumeCommand: statement.optionalText(13))
            if run.status == .running {
                switch identity(statement, pid: 10, host: 11, start: 12)?.liveness()
                    ?? .unknown(
                        "an older sluice recorded it without its process; sluice cannot tell whether it still runs")
                {
                case .alive: break
                case .dead: run.status = .interrupted
                case .unknown(let reason): run.unverified = reason
                }
            }
            runs.append(run)
        }
        return runs
    }

    /// Records the end of run `id` durably (``durably(_:_:)``) and removes
    /// the disk reserve; when the disk is full, removes the reserve first
    /// and tries again.
    package func finishRun(_ id: Int64, status: RunStatus, records: Int, counts: String, error message: String?)
        throws(StoreError)
    {
        let reserve = DiskReserve(storePath: connection.path)
        defer { reserve.remove() }
        do throws(StoreError) {
            try forgetOldRuns()
            try durably("recording the end of the run") { () throws(StoreError) in
                try recordEnd(id, status: status, records: records, counts: counts, error: message)
            }
        } catch  where error.cause == .diskFull {
            reserve.remove()
            try durably("recording the end of the run") { () throws(StoreError) in
                try recordEnd(id, status: status, records: records, counts: counts, error: message)
            }
        }
    }

    private func recordEnd(_ id: Int64, status: RunStatus, records: Int, counts: String, error: String?)
        throws(StoreError)
    {
        let statement = try SQLiteStatement(
            connection,
            "UPDATE _sluice_runs SET finished = \(Self.now), status = ?, records = ?, counts = ?, error = ? WHERE id = ?",
            "recording the end of the run")
        statement.bind(1, status.rawValue)
        statement.bind(2, Int64(records))
        statement.bind(3, counts)
        statement.bind(4, error)
        statement.bind(5, id)
        try statement.run("recording the end of the run")
    }

    /// Reads the ledger, the checkpoints and the tables of the store at
    /// `path` without changing it; a run recorded as running whose process
    /// is gone reads as `interrupted`.
    package static func status(path: String) throws(StoreError) -> StoreStatus {
        do {
            return try status(of: SQLiteConnection(path: path, readOnly: true))
        } catch  where error.cause == .cannotOpen {
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
            let count = try connection.strings(
                "SELECT count(*) FROM \(quoted(name))", column: 0, "counting \(quoted(name))")
            status.tables.append(TableRows(name: name, rows: Int(count.first ?? "") ?? 0))
        }
        status.digests = try digestStatus(connection)
        if let columns = try runColumns(connection) {
            status.runs = try runs(
                SQLiteStatement(
                    connection, "SELECT \(columns) FROM _sluice_runs ORDER BY id DESC", "reading the ledger"))
        }
        // A store sluice did not make has no checkpoints to show.
        let hasCheckpoints = try !connection.strings(
            "SELECT name FROM sqlite_schema WHERE name = '_sluice_checkpoints'", column: 0, "reading checkpoints"
        ).isEmpty
        guard hasCheckpoints else { return status }
        let inputs = try connection.strings(
            "SELECT input FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        let records = try connection.strings(
            "SELECT records FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        let bytes = try connection.strings(
            "SELECT bytes FROM _sluice_checkpoints ORDER BY input", column: 0, "reading checkpoints")
        for index in inputs.indices {
            status.checkpoints.append(
                InputCheckpoint(
                    input: inputs[index], records: Int(records[index]) ?? 0, bytes: Int64(bytes[index]) ?? 0))
        }
        return status
    }
}
