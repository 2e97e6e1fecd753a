import Foundation
import SluiceTestSupport
import Testing

/// A resume is the interrupted run finished, never another run: the ledger
/// records each run's options, and a resume with other options is refused
/// naming them (issue 25). Before the fix, a `--delete-missing` run killed
/// and resumed without `--delete-missing` exited 0, said `completed` and left
/// every row the dump no longer had.
@Suite(.serialized) struct ResumeOptionsTests {
    let crash = SyncCrashTests()

    /// Changes the store with the sqlite3 shell, as a kill at that point would have left it.
    func edit(_ store: String, _ sql: String) throws {
        let result = try runCommand("/usr/bin/sqlite3", [store, sql])
        #expect(result.status == 0, "\(result.stderr)")
    }

    enum KillPoint: String, CaseIterable { case reading, sweeping }

    @Test(arguments: KillPoint.allCases) func aResumeWithoutDeleteMissingIsRefusedAndTheRightOneFinishes(
        at point: KillPoint
    ) throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        #expect(
            try runCommand(sluice, ["import", "--mapping", crash.mapping, "--into", base, SyncCrashTests.all]).status
                == 0)
        let reference = directory.appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: reference)
        let sync = ["import", "--mapping", crash.mapping, "--delete-missing", SyncCrashTests.third]
        #expect(try runCommand(sluice, sync + ["--into", reference]).status == 0)
        let expected = crash.dump(reference)
        #expect(expected[0].count == 20_000)

        let store = directory.appendingPathComponent("killed.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: store)
        let wasKilled = try SyncCrashTests.killed(sync + ["--into", store]) {
            switch point {
            // Once the ledger holds the run (before it, a kill leaves nothing
            // to resume); a fixed 0.3 s outlasted the release binary's run.
            case .reading: crash.statuses(store).count == 2
            case .sweeping: StoreReader(store).count("Event") < 60_000
            }
        }
        #expect(wasKilled, "\(point): the run ended before the kill")
        let left = crash.dump(store)

        let other = try runCommand(
            sluice, ["import", "--mapping", crash.mapping, "--into", store, "--resume", SyncCrashTests.third])
        #expect(other.status == 64, "\(point): \(other.stderr)")
        #expect(
            other.stderr.contains("cannot resume run 2")
                && other.stderr.contains("--delete-missing: true then, false now"), "\(other.stderr)")
        #expect(crash.dump(store) == left, "\(point): the refused resume changed the store")

        let resumed = try runCommand(sluice, sync + ["--into", store, "--resume"])
        #expect(resumed.status == 0, "\(point): \(resumed.stderr)")
        #expect(crash.dump(store) == expected, "\(point): the resumed store differs from the uninterrupted one")
        #expect(crash.statuses(store) == ["completed", "interrupted", "completed"])
    }

    /// A changed mapping or write mode is another run too.
    @Test func aResumeWithAnotherMappingOrModeIsRefused() throws {
        let directory = TestPaths.temporaryDirectory()
        let store = directory.appendingPathComponent("store.sqlite").path
        let arguments = ["import", "--mapping", crash.mapping, "--into", store, SyncCrashTests.all]
        #expect(try runCommand(sluice, arguments).status == 0)
        // The state a run killed after its first commit leaves.
        try edit(store, "UPDATE _sluice_runs SET status = 'running', finished = NULL")
        let changed = TestPaths.file(
            "changed.yml",
            try String(contentsOfFile: crash.mapping, encoding: .utf8)
                .replacingOccurrences(of: "score: integer", with: "score: string"))
        let mapping = try runCommand(
            sluice, ["import", "--mapping", changed, "--into", store, "--resume", SyncCrashTests.all])
        #expect(
            mapping.status == 64 && mapping.stderr.contains("the mapping (--mapping, or --entity and --key) changed"),
            "\(mapping.stderr)")
        let mode = try runCommand(sluice, arguments + ["--resume", "--mode", "replace"])
        #expect(mode.status == 64 && mode.stderr.contains("--mode: upsert then, replace now"), "\(mode.stderr)")
        // Comments and layout are not the mapping's meaning.
        let commented = TestPaths.file(
            "commented.yml", "# a comment\n\n" + (try String(contentsOfFile: crash.mapping, encoding: .utf8)))
        let same = try runCommand(
            sluice, ["import", "--mapping", commented, "--into", store, "--resume", SyncCrashTests.all])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(crash.statuses(store) == ["interrupted", "completed"])
    }

    /// A run killed after its sweeps (seen keys dropped) but before it
    /// recorded its end: the resume says the sweep was done, instead of
    /// "delete-missing left Event alone: the run saw none of its records".
    @Test func aResumeAfterTheSweepSaysTheSweepWasDone() throws {
        let directory = TestPaths.temporaryDirectory()
        let store = directory.appendingPathComponent("store.sqlite").path
        #expect(
            try runCommand(sluice, ["import", "--mapping", crash.mapping, "--into", store, SyncCrashTests.all]).status
                == 0)
        let sync = ["import", "--mapping", crash.mapping, "--into", store, "--delete-missing", SyncCrashTests.third]
        #expect(try runCommand(sluice, sync).status == 0)
        #expect(StoreReader(store).value("SELECT swept FROM _sluice_runs WHERE id = 2") == "1")
        try edit(store, "UPDATE _sluice_runs SET status = 'running', finished = NULL WHERE id = 2")
        let resumed = try runCommand(sluice, sync + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(
            resumed.stderr.contains(
                "run 2, which this run resumes, had already deleted the rows of Event, Tag that the dump no longer has"),
            "\(resumed.stderr)")
        #expect(!resumed.stderr.contains("left Event alone"), "\(resumed.stderr)")
        #expect(StoreReader(store).count("Event") == 20_000)
        // Resuming a completed run finds nothing left to do, and says so.
        let again = try runCommand(sluice, sync + ["--resume"])
        #expect(
            again.status == 0 && again.stderr.contains("run 3, which this run resumes, had completed"),
            "\(again.stderr)")
        #expect(StoreReader(store).count("Event") == 20_000)
    }

    /// The same in PostgreSQL: options and the sweep recorded in its ledger.
    @Test func postgresRefusesAResumeWithOtherOptionsAndKnowsTheSweepWasDone() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        let name = String(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? "")
        #expect(
            try runCommand(sluice, ["import", "--mapping", crash.mapping, "--into", database, SyncCrashTests.small])
                .status == 0)
        let sync = ["import", "--mapping", crash.mapping, "--into", database, "--delete-missing", SyncCrashTests.third]
        #expect(try runCommand(sluice, sync).status == 0)
        // As a run killed after its sweep leaves it.
        try server.execute("UPDATE _sluice_runs SET status = 'running', finished = NULL WHERE id = 2", in: name)
        let other = try runCommand(
            sluice, ["import", "--mapping", crash.mapping, "--into", database, "--resume", SyncCrashTests.third])
        #expect(
            other.status == 64 && other.stderr.contains("--delete-missing: true then, false now"), "\(other.stderr)")
        let resumed = try runCommand(sluice, sync + ["--resume"])
        #expect(
            resumed.status == 0 && resumed.stderr.contains("run 2, which this run resumes, had already deleted"),
            "\(resumed.stderr)")
        #expect(PostgresReader(database).value(#"SELECT count(*) FROM "Event""#) == "20000")
    }
}
