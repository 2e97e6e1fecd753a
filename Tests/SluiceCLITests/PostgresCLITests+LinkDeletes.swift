import SluiceTestSupport
import Testing

/// Deleting a few sources deletes their links through the link table's
/// index, in proportion to the deletions, not by reading the whole table.
extension PostgresCLITests {
    /// The link rows PostgreSQL has read from `table` (sequential scans and
    /// index fetches), once the runs' connections have closed and flushed
    /// their counts.
    func tuplesRead(_ server: PostgresTestServer, _ database: String, _ table: String) -> Int {
        waitForIdle(server, database)
        let reader = PostgresReader(database)
        _ = reader.value("SELECT pg_stat_force_next_flush()")
        return Int(
            reader.value(
                "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables "
                    + "WHERE relname = '\(table)'") ?? "") ?? -1
    }

    /// 30 of 30,000 events deleted, by a change file and by a sweep: the
    /// link table (67,500 rows) is read for the deleted events' links only.
    /// Before, the links went in a join with the deleted keys that
    /// PostgreSQL planned as a merge over the whole table's index (all
    /// 67,500 rows read).
    /// The same with a compound key, `[kind, id]`, whose links match on
    /// both columns (PostgreSQL planned that join by key before too: the
    /// case checks the condition on two columns deletes the same rows).
    @Test(arguments: [false, true]) func deletingSourcesReadsOnlyTheirLinks(compound: Bool) throws {
        let server = try PostgresTestServer.require()
        let key = compound ? "    key: [kind, id]\n" : "    key: id\n"
        let mapping = TestPaths.file(
            "pg-links-\(compound).yml", TestMappings.sync.replacingOccurrences(of: "    key: id\n", with: key))
        let changeMapping = TestPaths.file(
            "pg-links-changes-\(compound).yml",
            TestMappings.sync.replacingOccurrences(
                of: "    key: id\n", with: key + "    delete-when: {deleted: {equals: \"true\"}}\n"))
        let ids = Array(1...30_000)
        let deleted = Set(ids.filter { $0 % 1_000 == 7 })
        let day0 = SyncCrashTests.events(ids, name: "pg-links-day0.jsonl")
        let kept = SyncCrashTests.events(ids.filter { !deleted.contains($0) }, name: "pg-links-kept.jsonl")
        let deletions = TestPaths.file(
            "pg-links-deletions-\(compound).jsonl",
            deleted.sorted().map { #"{"id": \#($0), "kind": "k\#($0 % 7)", "deleted": true}"# }.joined(separator: "\n")
                + "\n")
        let base = try server.newDatabase()
        let first = try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, day0])
        #expect(first.status == 0, "\(first.stderr)")
        let links = Int(PostgresReader(base).value("SELECT count(*) FROM \"Event_tags\"") ?? "") ?? 0
        #expect(links > 60_000)

        let runs: [(String, [String])] = [
            ("change file", ["import", "--mapping", changeMapping, deletions]),
            ("sweep", ["import", "--mapping", mapping, "--delete-missing", kept]),
        ]
        for (name, arguments) in runs {
            let database = try copy(server, of: base, name == "sweep" ? "sweep" : "change")
            let before = tuplesRead(server, database, "Event_tags")
            let result = try runCommand(sluice, arguments + ["--into", database])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let read = tuplesRead(server, database, "Event_tags") - before
            let left = PostgresReader(database).value("SELECT count(*) FROM \"Event\"")
            #expect(left == "\(ids.count - deleted.count)", "\(name)")
            #expect(
                read < 1_000, "\(name): \(read) link rows read to delete \(deleted.count) events' links of \(links)")
        }
    }
}
