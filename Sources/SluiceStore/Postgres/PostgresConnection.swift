import CSluicePQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libpq connection with the few calls the store needs: statements with
/// text parameters, `COPY … FROM STDIN` and `COPY … TO STDOUT`, and a cancel that another thread
/// may send. Not thread-safe apart from ``cancel()``: one thread at a time.
final class PostgresConnection {
    /// The server and database, without a password, for messages:
    /// `postgresql://user@host:port/db`.
    let name: String
    private var handle: OpaquePointer?
    /// Whether a dry run holds the session: one transaction, begun by
    /// ``beginDryRun(_:)`` and rolled back by ``close()``, in which
    /// ``begin(_:)`` and ``commit(_:)`` are a savepoint and its release.
    private(set) var isDryRun = false
    /// libpq's cancel object, made once: ``cancel()`` uses it from any thread.
    private let canceller: OpaquePointer?

    /// Connects with `conninfo` (a `postgresql://` URI, libpq's keyword
    /// form, or empty for the `PG*` environment variables). The session
    /// speaks UTC and UTF-8, and its notices are dropped: the importer says
    /// what happened itself.
    init(_ conninfo: String) throws(StoreError) {
        let connection = PQconnectdb(conninfo)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.trimmed(PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(connection)
            throw StoreError(
                path: Self.redacted(conninfo), action: "connecting to PostgreSQL", message: message, cause: .connection)
        }
        handle = connection
        let host = String(cString: PQhost(connection))
        name =
            "postgresql://\(String(cString: PQuser(connection)))@"
            + "\(host.hasPrefix("/") ? "[\(host)]" : host):\(String(cString: PQport(connection)))/\(String(cString: PQdb(connection)))"
        canceller = PQgetCancel(connection)
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        try execute(
            "SET TIME ZONE 'UTC'; SET client_encoding TO 'UTF8'; SET client_min_messages TO warning",
            "setting up the session")
    }

    /// Makes this session's commits return before their WAL reaches the
    /// disk (`synchronous_commit = off`). A batch commits with its
    /// checkpoint, so a server crash that loses the last commits loses their
    /// checkpoints with them and `--resume` applies those batches again; the
    /// end of a run commits synchronously (``commitDurably(_:_:)``), which
    /// makes every earlier commit durable too, the WAL being one sequence.
    /// 200,000 events into a server with fsync on, two alternating pairs:
    /// first load 4.32 and 4.53 s synchronous, 4.18 and 4.18 s not; the
    /// unchanged file again 3.79/3.65 against 3.77/3.69 s.
    func commitAsynchronously() throws(StoreError) {
        try execute("SET synchronous_commit TO off", "setting up the session")
    }

    /// Runs `sql` in a transaction whose commit waits for the disk;
    /// returns the first column of its rows.
    @discardableResult
    func commitDurably(_ sql: String, _ action: String, _ parameters: [String?] = []) throws(StoreError) -> [String?] {
        try begin(action)
        do throws(StoreError) {
            try execute("SET LOCAL synchronous_commit TO on", action)
            let values = try strings(sql, action, parameters)
            try commit(action)
            return values
        } catch {
            rollback()
            throw error
        }
    }

    /// Starts the one transaction of a dry run: every write after it stays
    /// in it, and ``close()`` rolls it back.
    func beginDryRun(_ action: String) throws(StoreError) {
        try execute("BEGIN", action)
        isDryRun = true
    }

    /// Starts a unit of work that commits as a whole: a transaction, or in
    /// a dry run a savepoint (failing if the dry run's transaction is gone,
    /// so that no later write could commit on its own).
    func begin(_ action: String) throws(StoreError) {
        guard isDryRun else {
            try execute("BEGIN", action)
            return
        }
        guard let handle, PQtransactionStatus(handle) == PQTRANS_INTRANS else {
            throw StoreError(path: name, action: action, message: "the dry run's transaction was rolled back", code: 0)
        }
        try execute("SAVEPOINT sluice_unit", action)
    }

    /// Commits the unit ``begin(_:)`` started (in a dry run, releases the
    /// savepoint into the dry run's transaction).
    func commit(_ action: String) throws(StoreError) {
        try execute(isDryRun ? "RELEASE SAVEPOINT sluice_unit" : "COMMIT", action)
    }

    /// Rolls the unit ``begin(_:)`` started back; errors are ignored (the
    /// connection may be gone).
    func rollback() {
        _ = try? execute(
            isDryRun ? "ROLLBACK TO SAVEPOINT sluice_unit; RELEASE SAVEPOINT sluice_unit" : "ROLLBACK", "rolling back")
    }

    deinit { close() }

    /// Closes the connection; a dry run's transaction is rolled back first.
    func close() {
        if isDryRun, let handle { PQclear(PQexec(handle, "ROLLBACK")) }
        if let canceller { PQfreeCancel(canceller) }
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Asks the server to stop the statement running now (it then fails
    /// with SQLSTATE 57014). Safe to call from any thread.
    func cancel() {
        guard let canceller else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(canceller, &buffer, Int32(buffer.count))
    }

    /// Runs `sql` (several statements allowed when `parameters` is empty)
    /// and returns its last result. Parameters go as text, `nil` as NULL.
    @discardableResult
    func execute(_ sql: String, _ action: String, _ parameters: [String?] = []) throws(StoreError) -> PostgresResult {
        guard let handle else { throw closedError(action, sql) }
        let result: OpaquePointer?
        if parameters.isEmpty {
            result = PQexec(handle, sql)
        } else {
            var copies = parameters.map { $0.map { strdup($0) } ?? nil }
            defer { for copy in copies { free(copy) } }
            result = copies.withUnsafeMutableBufferPointer { values in
                values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constant in
                    PQexecParams(handle, sql, Int32(parameters.count), nil, constant.baseAddress, nil, nil, 0)
                }
            }
        }
        return try check(PostgresResult(result), action, sql)
    }

    /// The first column of `sql`'s rows.
    func strings(_ sql: String, _ action: String, _ parameters: [String?] = []) throws(StoreError) -> [String?] {
        let result = try execute(sql, action, parameters)
        return (0..<result.rowCount).map { result.value($0, 0) }
    }

    /// Runs `COPY … FROM STDIN` statement `sql` and sends it the bytes
    /// `body` writes into the ``CopyBuffer`` it is given.
    func copy(_ sql: String, _ action: String, _ body: (inout CopyBuffer) throws(StoreError) -> Void) throws(StoreError)
    {
        guard let handle else { throw closedError(action, sql) }
        let started = PostgresResult(PQexec(handle, sql))
        guard started.status == PGRES_COPY_IN else {
            _ = try check(started, action, sql)
            return
        }
        var buffer = CopyBuffer { bytes in
            bytes.withUnsafeBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) == 1 }
            }
        }
        var failure: StoreError?
        do throws(StoreError) {
            try body(&buffer)
            buffer.finish()
        } catch {
            failure = error
        }
        let ended = PQputCopyEnd(handle, failure == nil && buffer.sent ? nil : "sluice stopped the copy")
        let outcome = endCopy(handle, action, sql)
        if let failure { throw failure }
        if let outcome { throw outcome }
        if ended != 1 || !buffer.sent { throw connectionError(action, sql) }
    }

    /// Runs `COPY … TO STDOUT (FORMAT binary)` statement `sql` and calls
    /// `body` with each row's fields (valid only during the call), as
    /// libpq receives them: one row in memory at a time, however many the
    /// statement sends. After `body` throws, the remaining rows are read
    /// and dropped (the connection takes no other statement until the copy
    /// ends), and its error is thrown; a copy that stops before its end (an
    /// error, or a statement sent on the connection from `body`, after which
    /// libpq drops the rest) throws too.
    func copyOut(_ sql: String, _ action: String, _ body: (inout CopyRow) throws(StoreError) -> Void)
        throws(StoreError)
    {
        guard let handle else { throw closedError(action, sql) }
        let started = PostgresResult(PQexec(handle, sql))
        guard started.status == PGRES_COPY_OUT else {
            _ = try check(started, action, sql)
            return
        }
        var failure: StoreError?
        var headerRead = false
        while true {
            var data: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(handle, &data, 0)
            guard length >= 0, let data else {
                // -2 is an error, or a copy left before its end (a statement
                // sent on this connection during it drops the rest): never
                // every row.
                if length == -2 { failure = failure ?? connectionError(action, sql) }
                break
            }
            defer { PQfreemem(data) }
            guard failure == nil else { continue }
            var row = CopyRow(UnsafeRawBufferPointer(start: data, count: Int(length)))
            // The signature and header come before the first row's fields.
            if !headerRead {
                headerRead = true
                guard row.skipHeader() else {
                    failure = StoreError(
                        path: name, action: action, message: "the server's COPY data has no binary header", code: 0)
                    continue
                }
            }
            guard !row.isTrailer else { continue }
            do throws(StoreError) { try body(&row) } catch { failure = error }
        }
        let outcome = endCopy(handle, action, sql)
        if let failure { throw failure }
        if let outcome { throw outcome }
    }

    /// Reads a copy's results (its own, then nil: every result must be read
    /// before the connection takes the next statement); the first error.
    private func endCopy(_ handle: OpaquePointer, _ action: String, _ sql: String) -> StoreError? {
        var outcome: StoreError?
        while let next = PQgetResult(handle) {
            do throws(StoreError) { _ = try check(PostgresResult(next), action, sql) } catch {
                outcome = outcome ?? error
            }
        }
        return outcome
    }

    /// Throws the error a failed result carries, naming the server's
    /// message, its SQLSTATE and the statement.
    private func check(_ result: PostgresResult, _ action: String, _ sql: String) throws(StoreError) -> PostgresResult {
        switch result.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_IN, PGRES_COPY_OUT: return result
        default:
            guard let raw = result.handle else { throw connectionError(action, sql) }
            let field = { (code: UInt8) -> String? in PQresultErrorField(raw, Int32(code)).map { String(cString: $0) } }
            let message = field(UInt8(ascii: "M")) ?? Self.trimmed(PQresultErrorMessage(raw))
            let detail = [field(UInt8(ascii: "D")), field(UInt8(ascii: "H"))].compactMap { $0 }
            let state = field(UInt8(ascii: "C")).flatMap { $0.isEmpty ? nil : $0 }
            // A connection lost mid-statement leaves a result without SQLSTATE.
            let lost = handle.map { PQstatus($0) == CONNECTION_BAD } ?? true
            throw StoreError(
                path: name, action: action, message: ([message] + detail).joined(separator: "; "),
                cause: state.map(StoreError.Cause.init(sqlState:)) ?? (lost ? .connection : .other), sql: sql,
                sqlState: state)
        }
    }

    /// The connection's own error: the server went away, or libpq failed.
    private func connectionError(_ action: String, _ sql: String) -> StoreError {
        let message = handle.map { Self.trimmed(PQerrorMessage($0)) } ?? "the connection is closed"
        return StoreError(
            path: name, action: action, message: message.isEmpty ? "the connection failed" : message,
            cause: .connection,
            sql: sql)
    }

    /// The error of a statement given to a closed connection.
    private func closedError(_ action: String, _ sql: String) -> StoreError {
        StoreError(path: name, action: action, message: "the connection is closed", cause: .connection, sql: sql)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        var text = String(cString: message)
        while text.last?.isWhitespace == true { text.removeLast() }
        return text.split(separator: "\n").map(String.init).joined(separator: "; ")
    }

    /// `conninfo` without its password, for messages before the connection
    /// exists.
    static func redacted(_ conninfo: String) -> String {
        var text = conninfo
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
            let colon = text[scheme.upperBound..<at].firstIndex(of: ":")
        {
            text.replaceSubrange(colon..<at, with: ":***")
        }
        return text.split(separator: " ").map { $0.hasPrefix("password=") ? "password=***" : String($0) }.joined(
            separator: " ")
    }
}

/// A libpq result, cleared when the value goes away.
final class PostgresResult {
    let handle: OpaquePointer?

    init(_ handle: OpaquePointer?) { self.handle = handle }

    deinit { PQclear(handle) }

    var status: ExecStatusType { handle.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR }
    var rowCount: Int { handle.map { Int(PQntuples($0)) } ?? 0 }

    /// The text of a value, nil for NULL.
    func value(_ row: Int, _ column: Int) -> String? {
        guard let handle, PQgetisnull(handle, Int32(row), Int32(column)) == 0 else { return nil }
        return String(cString: PQgetvalue(handle, Int32(row), Int32(column)))
    }

    /// The value as an integer (0 for NULL).
    func int(_ row: Int, _ column: Int) -> Int { value(row, column).flatMap { Int($0) } ?? 0 }

    /// Rows the statement changed (`INSERT`, `UPDATE`, `DELETE`).
    var affected: Int { handle.flatMap { Int(String(cString: PQcmdTuples($0))) } ?? 0 }
}
