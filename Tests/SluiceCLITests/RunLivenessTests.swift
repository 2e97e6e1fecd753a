import Foundation
import SluiceTestSupport
import Testing

/// What the SQLite ledger says of a run whose process died, of a run of
/// another process that is still going, and of runs an older sluice
/// recorded.
@Suite(.serialized) struct RunLivenessTests {
    let mapping = SyncCrashTests.syncMapping
    let all = SyncCrashTests.events(Array(1...60_000), name: "all.jsonl")

    func statuses(_ store: String) -> [String] {
        StoreReader(store).rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
    }

    /// The command `sluice status` gives to resume a run, if any.
    func resumeCommand(_ status: String) -> String? {
        for line in status.split(separator: "\n") {
            if let range = line.range(of: "to resume: ") { return String(line[range.upperBound...]) }
        }
        return nil
    }

    /// An import killed with SIGKILL: `sluice status` shows it interrupted
    /// (before the fix: running, until another run began) with the command
    /// that resumes it, and that command, run by a shell, finishes it.
    @Test func aKilledRunShowsAsInterruptedWithTheCommandThatResumesIt() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("killed.sqlite").path
        let arguments = [
            "import", "--mapping", mapping, "--into", store, "--order", "input", "--batch-rows", "500", all,
        ]
        #expect(try SyncCrashTests.killed(arguments) { StoreReader(store).count("Event") > 0 })
        #expect(statuses(store) == ["running"], "the ledger as the killed run left it")

        let status = try runCommand(sluice, ["status", store])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("#1 interrupted started"), "\(status.stdout)")
        #expect(!status.stdout.contains("running"), "\(status.stdout)")
        let resume = try #require(resumeCommand(status.stdout), "\(status.stdout)")
        #expect(
            resume
                == "cd \(FileManager.default.currentDirectoryPath) && \(([sluice] + arguments + ["--resume"]).joined(separator: " "))"
        )

        let json = try runCommand(sluice, ["status", "--json", store])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let run = try #require((object["runs"] as? [[String: Any]])?.first)
        #expect(
            run["status"] as? String == "interrupted" && run["resumeCommand"] as? String == resume, "\(json.stdout)")

        let resumed = try runCommand("/bin/sh", ["-c", resume])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(StoreReader(store).count("Event") == 60_000)
        #expect(statuses(store) == ["interrupted", "completed"])
        let after = try runCommand(sluice, ["status", store])
        #expect(resumeCommand(after.stdout) == nil, "a resumed run is not offered again: \(after.stdout)")
    }

    /// A first import waits on its standard input (held open by the test)
    /// while a second process imports into the same store: before the fix
    /// the second marked the first `interrupted`. The first's row stays
    /// `running`, `sluice status` shows it running, and it ends `completed`.
    @Test func aRunStartingLeavesALiveRunOfAnotherProcessRunning() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("two.sqlite").path
        let zeroConfig = ["import", "--into", store, "--entity", "Event", "--key", "id"]
        let first = Process()
        first.executableURL = URL(fileURLWithPath: sluice)
        first.arguments = zeroConfig + ["-"]
        let input = Pipe()
        let errors = Pipe()
        first.standardInput = input
        first.standardOutput = FileHandle.nullDevice
        first.standardError = errors
        try first.run()
        input.fileHandleForWriting.write(Data(#"{"id": 1, "kind": "first"}"#.utf8 + [10]))
        let deadline = Date().addingTimeInterval(30)
        while statuses(store) != ["running"] && first.isRunning && Date() < deadline { usleep(5_000) }
        #expect(statuses(store) == ["running"])

        let later = TestPaths.file(
            "later.jsonl", (2...100).map { #"{"id": \#($0), "kind": "second"}"# }.joined(separator: "\n") + "\n")
        let second = try runCommand(sluice, zeroConfig + [later])
        #expect(second.status == 0 || second.stderr.contains("locked"), "\(second.stderr)")
        #expect(StoreReader(store).value("SELECT status FROM _sluice_runs WHERE id = 1") == "running")
        let status = try runCommand(sluice, ["status", store])
        #expect(status.stdout.contains("#1 running started"), "\(status.stdout)")

        input.fileHandleForWriting.write(Data(#"{"id": 101, "kind": "first"}"#.utf8 + [10]))
        try input.fileHandleForWriting.close()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(first.terminationStatus == 0, "\(stderr)")
        #expect(statuses(store) == ["completed", second.status == 0 ? "completed" : "failed"])
        #expect(StoreReader(store).count("Event") == (second.status == 0 ? 101 : 2))
    }

    /// A store whose ledger an older sluice made (no process columns) with
    /// a run it left `running`: status says it cannot tell whether that run
    /// still goes, and the next import adds the columns, marks that run
    /// interrupted (as older sluice did) and records its own process.
    @Test func aLedgerAnOlderSluiceMadeKeepsWorking() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("old.sqlite").path
        let old = StoreReader(store, writable: true)
        _ = old.rows(
            """
            CREATE TABLE _sluice_runs (
              id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
              inputs TEXT NOT NULL, records INTEGER, counts TEXT, error TEXT)
            """)
        _ = old.rows(
            "INSERT INTO _sluice_runs (started, status, inputs) VALUES ('2026-01-01 00:00:00.000', 'running', 'old.jsonl')"
        )
        let before = try runCommand(sluice, ["status", store])
        #expect(before.status == 0, "\(before.stderr)")
        #expect(before.stdout.contains("#1 running started"), "\(before.stdout)")
        #expect(before.stdout.contains("an older sluice recorded it"), "\(before.stdout)")

        let input = TestPaths.file("new.jsonl", #"{"id": 1}"# + "\n")
        let run = try runCommand(sluice, ["import", "--into", store, "--entity", "Event", "--key", "id", input])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(statuses(store) == ["interrupted", "completed"])
        let recorded = StoreReader(store).rows(
            "SELECT pid IS NOT NULL, host IS NOT NULL, resume_command LIKE '% --resume' FROM _sluice_runs WHERE id = 2")
        #expect(recorded == [["1", "1", "1"]])
    }

    /// A run recorded as running on another host: sluice cannot check its
    /// process, so status shows it running and says why, and a run
    /// starting here leaves it running (before the fix it was marked
    /// interrupted, and status said nothing).
    @Test func aRunOnAnotherHostIsNeitherJudgedNorMarked() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("shared.sqlite").path
        let input = TestPaths.file("one.jsonl", #"{"id": 1}"# + "\n")
        let arguments = ["import", "--into", store, "--entity", "Event", "--key", "id", input]
        #expect(try runCommand(sluice, arguments).status == 0)
        _ = StoreReader(store, writable: true).rows(
            "UPDATE _sluice_runs SET status = 'running', finished = NULL, host = 'elsewhere.invalid', pid = 1 WHERE id = 1"
        )
        let status = try runCommand(sluice, ["status", store])
        #expect(status.stdout.contains("#1 running started"), "\(status.stdout)")
        #expect(
            status.stdout.contains("it ran on host elsewhere.invalid, pid 1; sluice cannot tell"), "\(status.stdout)")
        #expect(resumeCommand(status.stdout) == nil, "\(status.stdout)")
        #expect(try runCommand(sluice, arguments).status == 0)
        #expect(statuses(store) == ["running", "completed"])
    }
}
