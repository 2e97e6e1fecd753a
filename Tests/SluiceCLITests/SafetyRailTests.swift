import Foundation
import SluiceTestSupport
import Testing

/// The safety rails of a nightly job, by the binary on SQLite stores:
/// `--max-delete` refusing a partial dump before its first deletion.
@Suite(.serialized) struct SafetyRailTests {
    let mapping = SyncCrashTests.syncMapping
    /// 2,000 events; the partial dump has 200 of them and 100 new ones.
    let all = SyncCrashTests.events(Array(1...2_000), name: "rails-all.jsonl")
    let partial = SyncCrashTests.events(Array(1...200) + Array(2_001...2_100), name: "rails-partial.jsonl")

    func statuses(_ store: String) -> [String] {
        StoreReader(store).rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
    }

    /// A store holding the 2,000 events.
    func loadedStore() throws -> String {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("rails.sqlite").path
        let load = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, all])
        #expect(load.status == 0, "\(load.stderr)")
        return store
    }

    /// The partial dump would delete 1,800 of the 2,100 events (85.7%):
    /// limits below refuse it (exit 65, the counts named, no row deleted,
    /// the 100 new events committed, the run failed), limits at or above
    /// it delete.
    @Test(arguments: [("10%", false), ("1799", false), ("85%", false), ("1800", true), ("86%", true)])
    func maxDeleteRefusesBeyondTheLimit(limit: String, allowed: Bool) throws {
        let store = try loadedStore()
        let sync = ["import", "--mapping", mapping, "--into", store, "--delete-missing", "--max-delete", limit, partial]
        let run = try runCommand(sluice, sync)
        if allowed {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(StoreReader(store).count("Event") == 300)
            #expect(statuses(store).last == "completed")
        } else {
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stderr.contains("Event would lose 1800 of its 2100 stored rows (85.7%)"), "\(run.stderr)")
            #expect(run.stderr.contains("--max-delete \(limit)"), "\(run.stderr)")
            #expect(!run.stderr.contains("Tag would lose"), "\(run.stderr)")
            #expect(StoreReader(store).count("Event") == 2_100)
            #expect(StoreReader(store).count("Event_tags") > 2_000 * 2)
            #expect(statuses(store).last == "failed")
        }
    }

    /// A refused run resumed with a larger limit sweeps with the keys the
    /// refused run saw, and ends where an unrefused run would.
    @Test func aRefusedRunResumesWithALargerLimit() throws {
        let store = try loadedStore()
        let sync = ["import", "--mapping", mapping, "--into", store, "--delete-missing", partial]
        #expect(try runCommand(sluice, sync + ["--max-delete", "10%"]).status == 65)
        let reference = TestPaths.temporaryDirectory().appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: try loadedStore(), toPath: reference)
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", reference, "--delete-missing", partial]).status == 0)

        let resumed = try runCommand(sluice, sync + ["--resume", "--max-delete", "95%", "--stats-json", store + ".json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let stats = try String(contentsOfFile: store + ".json", encoding: .utf8)
        #expect(stats.contains(#""deleted": 1800"#), "\(stats)")
        let tables = ["Event", "Event_tags", "Tag"]
        #expect(tables.map { StoreReader(store).rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
            == tables.map { StoreReader(reference).rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") })
        #expect(statuses(store) == ["completed", "failed", "completed"])
        #expect(StoreReader(store).value("SELECT count(*) FROM sqlite_schema WHERE name LIKE '\\_sluice\\_seen%' ESCAPE '\\'") == "0")
    }

    /// A negative count, a percentage above 100 and anything else are
    /// usage errors (64), before the store is touched.
    @Test(arguments: ["-1", "101%", "ten", "10%%", "%", "-5%"]) func aBadMaxDeleteIsAUsageError(limit: String) throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("bad.sqlite").path
        let run = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, "--delete-missing", "--max-delete", limit, partial])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--max-delete"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}
