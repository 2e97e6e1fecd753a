import Foundation
import SluiceTestSupport
import Testing

/// The binary against a PostgreSQL server of the test's own that crashes
/// (`pg_ctl stop -m immediate`) and starts again.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresServerCrashTests {
    /// The server crashes while an import waits on its standard input:
    /// once the server is back, `sluice status` shows the run interrupted
    /// (before the fix: running) with the command that resumes it, though
    /// the importer's process still lives (its session does not).
    @Test func aRunWhoseServerDiedShowsAsInterrupted() throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        let database = try server.newDatabase()
        let importer = Process()
        importer.executableURL = URL(fileURLWithPath: sluice)
        importer.arguments = ["import", "--into", database, "--entity", "Event", "--key", "id", "-"]
        let input = Pipe()
        importer.standardInput = input
        importer.standardOutput = FileHandle.nullDevice
        importer.standardError = FileHandle.nullDevice
        try importer.run()
        input.fileHandleForWriting.write(Data(#"{"id": 1}"#.utf8 + [10]))
        let deadline = Date().addingTimeInterval(30)
        while PostgresReader(database).value("SELECT status FROM _sluice_runs") != "running" && importer.isRunning
            && Date() < deadline
        {
            usleep(5_000)
        }
        #expect(try sluiceStatus(database).contains("#1 running started"))
        // The ledger's row was committed asynchronously: the WAL writer writes it within 200 ms.
        usleep(500_000)
        try server.crash()
        try server.start()

        let status = try sluiceStatus(database)
        #expect(status.contains("#1 interrupted started"), "\(status)")
        #expect(status.contains("to resume: cd ") && status.contains(" --resume"), "\(status)")
        #expect(importer.isRunning)
        try input.fileHandleForWriting.close()
        importer.waitUntilExit()
        #expect(importer.terminationStatus != 0, "the run succeeded on a connection the server had lost")
    }

    func sluiceStatus(_ database: String) throws -> String {
        let result = try runCommand(sluice, ["status", database])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// A database created from a template holding a ledger with an id
    /// sequence (as sluice made it before the fix), runs recorded, then a
    /// server crash: PostgreSQL 15 brings the sequence back behind the
    /// ledger's ids (`CREATE DATABASE`'s `WAL_LOG` strategy copies the
    /// template's sequence page with values cached but not logged, so the
    /// ids given out since are not in the WAL), and before the fix the
    /// next run, the `--resume`, failed on a duplicate key of the ledger.
    @Test func aResumeAfterACrashOfADatabaseMadeFromATemplate() throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        let olderLedger = """
            CREATE TABLE _sluice_runs (
              id bigserial PRIMARY KEY, started timestamptz NOT NULL, finished timestamptz, status text NOT NULL,
              inputs text NOT NULL, records bigint, counts text, error text, backend integer)
            """
        let olderRun =
            "INSERT INTO _sluice_runs (started, finished, status, inputs) VALUES (now(), now(), 'completed', 'day.jsonl')"
        try server.execute("CREATE DATABASE nightly_template")
        try server.execute("\(olderLedger); \(olderRun)", in: "nightly_template")
        try server.execute("CREATE DATABASE nightly TEMPLATE nightly_template")
        // Committed to the WAL before the crash (the server's default is asynchronous).
        for _ in 0..<3 { try server.execute("SET synchronous_commit TO on; \(olderRun)", in: "nightly") }
        try server.crash()
        try server.start()
        let sequence = PostgresReader(server.conninfo("nightly")).value("SELECT last_value FROM _sluice_runs_id_seq")
        #expect(
            sequence == "1", "PostgreSQL kept the sequence's advance over the crash: the reproduction no longer holds")

        let input = TestPaths.file("day.jsonl", #"{"id": 1}"# + "\n" + #"{"id": 2}"# + "\n")
        let resumed = try runCommand(
            sluice,
            ["import", "--into", server.conninfo("nightly"), "--entity", "Event", "--key", "id", "--resume", input])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let runs = PostgresReader(server.conninfo("nightly")).rows("SELECT id, status FROM _sluice_runs ORDER BY id")
        #expect(runs.map { $0[0] ?? "" } == ["1", "2", "3", "4", "5"])
        #expect(runs.last?[1] == "completed")
    }
}
