import Foundation
import SluiceTestSupport
import Testing

/// `sluice status --json`, as a script reads it: tables, runs with their
/// state, options and counts, and checkpoints, the same from SQLite and
/// PostgreSQL (issue 25).
@Suite(.serialized) struct StatusJSONTests {
    let mapping = SyncCrashTests.syncMapping
    let all = TestPaths.file(
        "four.jsonl", (1...4).map { #"{"id": \#($0), "tags": ["t\#($0 % 2)"]}"# }.joined(separator: "\n") + "\n")
    let two = TestPaths.file(
        "two.jsonl", (1...2).map { #"{"id": \#($0), "tags": ["t\#($0 % 2)"]}"# }.joined(separator: "\n") + "\n")

    /// Imports four events, then two with --delete-missing, and reads the
    /// status of `store` as JSON.
    func statusAfterTwoRuns(_ store: String) throws -> [String: Any] {
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, all]).status == 0)
        // Every record parsed (a skipping run would leave the two it kept unparsed, and count no unchanged row).
        let sync = try runCommand(
            sluice, ["import", "--mapping", mapping, "--into", store, "--delete-missing", "--no-skip", two])
        #expect(sync.status == 0, "\(sync.stderr)")
        let result = try runCommand(sluice, ["status", "--json", store])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }

    func expectTwoRuns(_ status: [String: Any]) {
        let tables = status["tables"] as? [[String: Any]] ?? []
        #expect(tables.first { $0["name"] as? String == "Event" }?["rows"] as? Int == 2, "\(tables)")
        let runs = status["runs"] as? [[String: Any]] ?? []
        #expect(runs.map { $0["id"] as? Int } == [2, 1])
        #expect(runs.map { $0["status"] as? String } == ["completed", "completed"])
        #expect(runs.first?["inputs"] as? [String] == [two])
        let options = runs.first?["options"] as? [String: Any]
        #expect(
            options?["delete-missing"] as? Bool == true && options?["mode"] as? String == "upsert", "\(options ?? [:])")
        #expect(runs.first?["swept"] as? Bool == true && runs.last?["swept"] as? Bool == false)
        let counts = runs.first?["counts"] as? [String: Any]
        let event = (counts?["entities"] as? [String: Any])?["Event"] as? [String: Any]
        #expect(event?["deleted"] as? Int == 2 && event?["unchanged"] as? Int == 2, "\(counts ?? [:])")
        #expect(runs.first?["error"] is NSNull && runs.first?["finished"] is String)
        let checkpoints = status["checkpoints"] as? [[String: Any]] ?? []
        #expect(checkpoints.first { $0["input"] as? String == two }?["records"] as? Int == 2, "\(checkpoints)")
    }

    @Test func sqliteStatusAsJSON() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("status.sqlite").path
        expectTwoRuns(try statusAfterTwoRuns(store))
        // --runs bounds the runs listed, newest first.
        let one = try runCommand(sluice, ["status", "--json", "--runs", "1", store])
        let runs =
            (try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])?["runs"]
            as? [[String: Any]]
        #expect(runs?.map { $0["id"] as? Int } == [2])
    }

    @Test func postgresStatusAsJSON() throws {
        let server = try PostgresTestServer.require()
        expectTwoRuns(try statusAfterTwoRuns(try server.newDatabase()))
    }
}
