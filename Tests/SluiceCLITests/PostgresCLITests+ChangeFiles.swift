import Foundation
import SluiceTestSupport
import Testing

/// A change file under a mapping of its own into PostgreSQL, killed while
/// it writes (docs/record-digests.md, "Other writers").
extension PostgresCLITests {
    /// The sync mapping with deletions: `{"id": K, "deleted": true}` deletes
    /// event K (another fingerprint than the dump's).
    static let changeMapping = TestPaths.file(
        "pg-sync-changes.yml",
        TestMappings.sync.replacingOccurrences(
            of: "    key: id\n", with: "    key: id\n    delete-when: {deleted: {equals: \"true\"}}\n"))

    /// A change file against 12,000 events: 2,880 of them with another
    /// score, 120 deleted, 1,000 as they are (which write nothing). Its
    /// 4,000 records are fewer than half the dump's: it is a change file,
    /// not a dump under a new mapping.
    static let changes: String = {
        var lines: [String] = []
        for id in 1...12_000 where id % 4 == 0 || id % 12 == 1 {
            if id % 100 == 0 {
                lines.append(#"{"id": \#(id), "deleted": true}"#)
                continue
            }
            let score = id % 4 == 0 ? -id : id * 3
            let tags = #""t\#(id % 5)", "u\#(id % 3)"\#(id % 4 == 0 ? #", "v""# : "")"#
            lines.append(#"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(score), "tags": [\#(tags)]}"#)
        }
        return TestPaths.file("pg-changes.jsonl", lines.joined(separator: "\n") + "\n")
    }()

    /// The change file, killed once its first batches are committed, then
    /// resumed or run afresh: the keys it logged are exactly those of the
    /// rows its committed batches changed or deleted (none of the rows it
    /// left as they were), the database ends as an uninterrupted change file
    /// leaves it, and the dump after it agrees with the dump after the
    /// uninterrupted one, which skips all but the 3,000 changed and deleted
    /// events' records. After the kill the digests are not trusted
    /// (the run killed marked them invalid): the dump parses every record
    /// and makes them anew, and the next skips every one.
    @Test(arguments: [true, false]) func aKilledChangeFileEndsWhereAnUninterruptedOneEnds(resume: Bool) throws {
        let server = try PostgresTestServer.require()
        let day0 = SyncCrashTests.events(Array(1...12_000), name: "pg-change-day0.jsonl")
        let change = ["import", "--mapping", Self.changeMapping, "--batch-rows", "500", Self.changes]
        let dumpRun = { (database: String) throws -> Int in
            let result = try runCommand(sluice, ["import", "--mapping", mapping, "--into", database, day0])
            #expect(result.status == 0, "\(result.stderr)")
            return DifferentialSync.unchangedRecords(result.stdout)
        }
        let base = try server.newDatabase()
        _ = try dumpRun(base)
        let before = dump(base)
        let reference = try copy(server, of: base, "reference")
        let clean = try runCommand(sluice, change + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        // The log's triggers and their functions went with the run.
        let catalog = PostgresReader(reference)
        #expect(catalog.value("SELECT count(*) FROM pg_trigger WHERE left(tgname, 16) = '_sluice_written_'") == "0")
        #expect(catalog.value("SELECT count(*) FROM pg_proc WHERE left(proname, 16) = '_sluice_written_'") == "0")
        let changed = dump(reference)
        #expect(try dumpRun(reference) == 9_000)
        let after = dump(reference)

        var landed = false
        for attempt in 0..<4 where !landed {
            let database = try copy(server, of: base, "c\(attempt)")
            var poll: PostgresReader? = PostgresReader(database)
            let logged = "SELECT count(*) FROM pg_class WHERE relname = '_sluice_voided_keys'"
            let killed = try SyncCrashTests.killed(change + ["--into", database]) {
                poll?.value(logged) == "1"
                    && Int(poll?.value("SELECT count(*) FROM _sluice_voided_keys") ?? "") ?? 0 > 0
            }
            poll = nil
            waitForIdle(server, database)
            let reader = PostgresReader(database)
            let keys = Set(
                reader.rows("SELECT DISTINCT k->>0 FROM _sluice_voided_keys WHERE tbl = 'Event'").compactMap { $0[0] })
            let stored = Dictionary(uniqueKeysWithValues: dump(database)[0].map { ($0[0] ?? "", $0) })
            let written = Set(before[0].filter { stored[$0[0] ?? ""] != $0 }.compactMap { $0[0] })
            landed = killed && !written.isEmpty && written.count < 3_000
            #expect(keys == written, "attempt \(attempt): \(keys.count) keys logged, \(written.count) rows written")
            #expect(reader.value("SELECT valid FROM _sluice_digest_state") == "f")

            let again = try runCommand(sluice, change + ["--into", database] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "\(again.stderr)")
            #expect(dump(database) == changed, "attempt \(attempt)")
            #expect(try dumpRun(database) == 0)
            #expect(dump(database) == after, "attempt \(attempt)")
            #expect(try dumpRun(database) == 12_000)
            #expect(statuses(database).filter { $0 != "completed" } == ["interrupted"], "attempt \(attempt)")
        }
        #expect(landed, "no kill landed while the change file wrote")
    }
}
