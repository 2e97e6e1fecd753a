import CSluicePQ
import Foundation

/// A PostgreSQL server of the tests' own: `initdb` into a temporary
/// directory, started by `pg_ctl` on a Unix socket there (no TCP port), as
/// the `postgres` user when the tests run as root (PostgreSQL refuses to
/// run as root), and stopped when the test process exits. Each test gets a
/// database of its own from ``newDatabase()``.
public final class PostgresTestServer: @unchecked Sendable {
    /// The server, started on first use, or why none could start.
    public static let shared: Result<PostgresTestServer, PostgresUnavailable> = {
        do {
            return .success(try PostgresTestServer())
        } catch let error as PostgresUnavailable {
            FileHandle.standardError.write(Data("PostgreSQL tests: no server: \(error.reason)\n".utf8))
            return .failure(error)
        } catch {
            return .failure(PostgresUnavailable(reason: "\(error)"))
        }
    }()

    /// Whether the PostgreSQL tests run: a server started, or CI requires
    /// them (`CI` is set), in which case they fail saying why.
    public static var enabled: Bool {
        if case .success = shared { return true }
        return ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// The started server; throws why there is none.
    public static func require() throws -> PostgresTestServer { try shared.get() }

    /// The directory holding the data, the log and the server's socket.
    public let directory: URL
    private let binaries: String
    private let runAs: [String]
    private let lock = NSLock()
    private var databases = 0

    private let data: String
    private let settings: String

    /// Starts a server in a new temporary directory.
    private init() throws {
        guard let binaries = Self.findBinaries() else {
            throw PostgresUnavailable(
                reason: "no initdb and pg_ctl (install Debian's postgresql package, or set SLUICE_PG_BIN)")
        }
        self.binaries = binaries
        directory = TestPaths.temporaryDirectory().appendingPathComponent("postgres")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard getpwnam("postgres") != nil else {
                throw PostgresUnavailable(
                    reason: "the tests run as root, and PostgreSQL needs a user to run as: there is no user postgres")
            }
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.path)
            runAs = ["/usr/sbin/runuser", "-u", "postgres", "--"]
        } else {
            runAs = []
        }
        data = directory.appendingPathComponent("data").path
        settings =
            "-k \(directory.path) -c listen_addresses='' -p \(Self.port) -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c max_connections=200"
        try run(
            [
                "\(binaries)/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                "--locale=C",
            ], "initdb")
        try start()
        StopAtExit.shared.add(runAs + ["\(binaries)/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// A server of the caller's own, which it may crash and start again
    /// (``crash()``, ``start()``) without disturbing the tests that share
    /// ``shared``; ``crash()`` it when done. initdb and a start: about a
    /// second.
    public static func makePrivate() throws -> PostgresTestServer {
        try PostgresTestServer()
    }

    /// Starts the server and waits until it takes connections (after a
    /// crash: once its recovery has replayed the WAL).
    public func start() throws {
        try run(
            [
                "\(binaries)/pg_ctl", "-D", data, "-l", directory.appendingPathComponent("log").path, "-o", settings,
                "-w", "start",
            ], "pg_ctl start")
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: every
    /// server process quits at once, nothing is flushed or checkpointed; the
    /// next start recovers from the WAL).
    public func crash() throws {
        try run(["\(binaries)/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], "pg_ctl stop")
    }

    /// The port in the socket's name (no TCP port is opened).
    public static let port = 5432

    /// libpq's keyword form for database `name` on this server.
    public func conninfo(_ name: String = "postgres") -> String {
        "host=\(directory.path) port=\(Self.port) user=postgres dbname=\(name)"
    }

    /// Creates an empty database and returns its connection string.
    public func newDatabase() throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "sluice_\(getpid())_\(databases)"
        }
        try execute("CREATE DATABASE \(name)")
        return conninfo(name)
    }

    /// Runs `sql` on database `database` and returns its rows as text.
    @discardableResult
    public func execute(_ sql: String, in database: String = "postgres") throws -> [[String?]] {
        let rows = PostgresReader(conninfo(database)).rows(sql)
        if let message = rows.first?.first ?? nil, message.hasPrefix("error: ") {
            throw PostgresUnavailable(reason: "\(sql): \(message)")
        }
        return rows
    }

    /// Runs `command` with its output in `directory/what.out`. Spawned and
    /// waited for directly: Foundation's `Process` never saw `pg_ctl start`
    /// end (its child stayed a zombie and the test process waited forever).
    private func run(_ command: [String], _ what: String) throws {
        let full = runAs + command
        let output = directory.appendingPathComponent("\(what.replacingOccurrences(of: " ", with: "-")).out").path
        let status = spawnAndWait(full, output: output)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw PostgresUnavailable(reason: "\(what) failed (status \(status)): \(text)")
        }
    }

    /// The directory with initdb and pg_ctl: `SLUICE_PG_BIN`, else the
    /// newest of Debian's /usr/lib/postgresql/N/bin, else the `PATH`.
    private static func findBinaries() -> String? {
        let manager = FileManager.default
        if let custom = ProcessInfo.processInfo.environment["SLUICE_PG_BIN"] { return custom }
        let versions = (try? manager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "/usr/lib/postgresql/\(version)/bin"
            if manager.isExecutableFile(atPath: "\(bin)/initdb") && manager.isExecutableFile(atPath: "\(bin)/pg_ctl") {
                return bin
            }
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            if manager.isExecutableFile(atPath: "\(directory)/initdb") { return String(directory) }
        }
        return nil
    }
}

/// Why no PostgreSQL server could be started for the tests.
public struct PostgresUnavailable: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "no PostgreSQL server for the tests: \(reason)" }
}

/// Commands run when the test process exits (stopping the server), before
/// its temporary directories are removed.
final class StopAtExit: @unchecked Sendable {
    static let shared: StopAtExit = {
        let stopper = StopAtExit()
        atexit { StopAtExit.shared.runAll() }
        return stopper
    }()

    private let lock = NSLock()
    private var commands: [[String]] = []

    func add(_ command: [String]) { lock.withLock { commands.append(command) } }

    func runAll() {
        for command in lock.withLock({ commands }) { _ = spawnAndWait(command, output: "/dev/null") }
    }
}

/// Runs `command` (an absolute path and its arguments) with standard input
/// from /dev/null, its output appended to `output` and no other descriptor
/// of the test process; returns its wait status, or -1 when it could not
/// start.
func spawnAndWait(_ command: [String], output: String) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    // Nothing else of the test process: a server started mid-run would hold
    // other tests' pipes open (a child's standard input never ending).
    // glibc 2.34's call, which Swift's Glibc module does not declare.
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    if let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
    }
    var arguments = command.map { strdup($0) } + [nil]
    defer { for argument in arguments { free(argument) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, command[0], &actions, nil, &arguments, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return status
}

/// Reads a PostgreSQL database back for assertions.
public final class PostgresReader {
    private let connection: OpaquePointer?

    /// Connects with libpq's `conninfo`.
    public init(_ conninfo: String) {
        connection = PQconnectdb(conninfo)
    }

    deinit { PQfinish(connection) }

    /// The rows of `sql`, every value as text (`nil` for NULL); an error
    /// comes back as one row holding its message.
    public func rows(_ sql: String) -> [[String?]] {
        guard let result = PQexec(connection, sql) else { return [["error: no result"]] }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            return [["error: " + String(cString: PQresultErrorMessage(result))]]
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) != 0 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }

    /// The single value of `sql`.
    public func value(_ sql: String) -> String? { rows(sql).first?.first ?? nil }
}
