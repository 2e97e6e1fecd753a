import Foundation
import SluiceTestSupport
import Testing

/// The safety rails of a nightly job, by the binary on SQLite stores:
/// `--max-delete` refusing a partial dump before its first deletion, and
/// `--dry-run` counting what a run would write while writing nothing.
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
        let sync = [
            "import", "--mapping", mapping, "--into", store, "--delete-missing", "--max-delete", limit, partial,
        ]
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
        #expect(
            try runCommand(sluice, ["import", "--mapping", mapping, "--into", reference, "--delete-missing", partial])
                .status == 0)

        let resumed = try runCommand(
            sluice, sync + ["--resume", "--max-delete", "95%", "--stats-json", store + ".json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let stats = try String(contentsOfFile: store + ".json", encoding: .utf8)
        #expect(stats.contains(#""deleted": 1800"#), "\(stats)")
        let tables = ["Event", "Event_tags", "Tag"]
        #expect(
            tables.map { StoreReader(store).rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
                == tables.map { StoreReader(reference).rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") })
        #expect(statuses(store) == ["completed", "failed", "completed"])
        #expect(
            StoreReader(store).value(
                "SELECT count(*) FROM sqlite_schema WHERE name LIKE '\\_sluice\\_seen%' ESCAPE '\\'") == "0")
    }

    /// A negative count, a percentage above 100 and anything else are
    /// usage errors (64), before the store is touched.
    @Test(arguments: ["-1", "101%", "ten", "10%%", "%", "-5%"]) func aBadMaxDeleteIsAUsageError(limit: String) throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("bad.sqlite").path
        let run = try runCommand(
            sluice,
            ["import", "--mapping", mapping, "--into", store, "--delete-missing", "--max-delete", limit, partial])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--max-delete"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    /// Events `ids` whose values differ from ``SyncCrashTests/events(_:name:)``
    /// for every fourth key (score, kind and tags), in shuffled order.
    static func changed(_ ids: [Int], name: String) -> String {
        var generator = SplitMix(seed: 3)
        let lines = ids.shuffled(using: &generator).map { id in
            let bump = id % 4 == 0
            return
                #"{"id": \#(id), "kind": "k\#(bump ? id % 5 : id % 7)", "score": \#(id * 3 + (bump ? 1 : 0)), "tags": ["t\#(id % 5)", "\#(bump ? "w" : "u")\#(id % 3)"]}"#
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    /// The SHA-256 of the file at `path`, nil when it does not exist.
    func checksum(_ path: String) throws -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try runCommand("/usr/bin/sha256sum", [path]).stdout.split(separator: " ").first.map(String.init)
    }

    /// The counts of a `--stats-json` file: every member but the time and
    /// the dry run's own.
    func counts(_ path: String) throws -> NSDictionary {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return object.filter { !["seconds", "dryRun", "wouldFail"].contains($0.key) } as NSDictionary
    }

    /// The summary's table lines (the first line has the time).
    func tableLines(_ stdout: String) -> [Substring] {
        stdout.split(separator: "\n").filter { !$0.hasPrefix("dry run:") }.dropFirst().map { $0 }
    }

    /// A dry run then the real run, on the same store and input, three
    /// times: the first load into a store that does not exist yet, an
    /// update file (changed, new and unchanged events, changed tag links
    /// and new tag stubs), and a partial dump with `--delete-missing`. The
    /// dry run leaves the store's file byte for byte as it was (and creates
    /// none), the ledger without a row, and reports (printed and
    /// `--stats-json`) exactly the counts of the real run that follows.
    @Test(arguments: ["key", "input"]) func aDryRunWritesNothingAndCountsWhatTheRunWould(order: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let store = directory.appendingPathComponent("dry.sqlite").path
        let update = Self.changed(
            Array(1...2_000).filter { $0 % 9 != 0 } + Array(2_001...2_150), name: "rails-update.jsonl")
        let steps: [(name: String, arguments: [String])] = [
            ("first load", [all]), ("update file", [update]), ("delete-missing", ["--delete-missing", partial]),
        ]
        for (step, (name, arguments)) in steps.enumerated() {
            let base = ["import", "--mapping", mapping, "--into", store, "--order", order] + arguments
            let before = try checksum(store)
            let runs = before == nil ? [] : statuses(store)
            let dry = try runCommand(
                sluice, base + ["--dry-run", "--stats-json", directory.appendingPathComponent("dry\(step).json").path])
            #expect(dry.status == 0, "\(name): \(dry.stderr)")
            #expect(dry.stdout.hasPrefix("dry run: nothing was written to the store"), "\(name): \(dry.stdout)")
            #expect(try checksum(store) == before, "\(name): the dry run changed the store's file")
            if before != nil { #expect(statuses(store) == runs, "\(name): the ledger recorded the dry run") }
            let real = try runCommand(
                sluice, base + ["--stats-json", directory.appendingPathComponent("real\(step).json").path])
            #expect(real.status == 0, "\(name): \(real.stderr)")
            #expect(try checksum(store) != before, "\(name): the real run wrote nothing")
            #expect(tableLines(dry.stdout) == tableLines(real.stdout), "\(name):\n\(dry.stdout)\n\(real.stdout)")
            let dryCounts = try counts(directory.appendingPathComponent("dry\(step).json").path)
            #expect(dryCounts == (try counts(directory.appendingPathComponent("real\(step).json").path)), "\(name)")
            // Something to count in each step: events and links written,
            // new tags stubbed in the first two, events deleted in the last.
            let tables = try #require(dryCounts["tables"] as? [[String: Any]])
            let count = { (table: Int, member: String) in tables[table][member] as? Int ?? 0 }
            #expect(
                count(0, "inserted") + count(0, "updated") + count(0, "deleted") > 0 && count(2, "inserted") > 0,
                "\(name): \(tables)")
            #expect(step == 2 ? count(0, "deleted") > 0 : count(1, "stubs") > 0, "\(name): \(tables)")
        }
        #expect(statuses(store) == ["completed", "completed", "completed"])
    }

    /// A dry run with `--max-delete` that the real run would exceed: the
    /// summary of what `--delete-missing` would delete, then exit 65 saying
    /// that the real run would be refused; the file is unchanged.
    @Test func aDryRunSaysTheRealRunWouldBeRefused() throws {
        let store = try loadedStore()
        let before = try checksum(store)
        let dry = try runCommand(
            sluice,
            [
                "import", "--mapping", mapping, "--into", store, "--delete-missing", "--max-delete", "10%", "--dry-run",
                partial,
            ])
        #expect(dry.status == 65, "\(dry.stderr)")
        #expect(
            dry.stderr.contains(
                "dry run: the real run would fail: delete-missing would be refused: Event would lose 1800 of its 2100 stored rows"
            ), "\(dry.stderr)")
        #expect(
            tableLines(dry.stdout).contains { $0.hasPrefix("Event ") && $0.hasSuffix(" 1800         0         0") },
            "\(dry.stdout)")
        #expect(try checksum(store) == before)
        #expect(statuses(store) == ["completed"])
    }

    /// A dry run whose real run would end on links to missing records under
    /// `missing: error`: the same counts, exit 65 saying why the real run
    /// would fail, the file unchanged; the real run then fails as it says.
    @Test func aDryRunSaysTheRealRunWouldFailOnDanglingReferences() throws {
        let strict = TestPaths.file(
            "strict.yml",
            """
            entities:
              Event:
                records: $
                key: id
                attributes: {id: integer}
                relationships:
                  owner: {entity: User, source: owner, missing: error}
              User:
                key: id
                attributes: {id: integer}
            """)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("strict.sqlite").path
        let good = TestPaths.file("good.jsonl", #"{"id": 1, "owner": null}"# + "\n")
        #expect(try runCommand(sluice, ["import", "--mapping", strict, "--into", store, good]).status == 0)
        let before = try checksum(store)
        let dangling = TestPaths.file(
            "dangling.jsonl", #"{"id": 2, "owner": 7}"# + "\n" + #"{"id": 3, "owner": 8}"# + "\n")
        let dry = try runCommand(sluice, ["import", "--mapping", strict, "--into", store, "--dry-run", dangling])
        #expect(dry.status == 65, "\(dry.stderr)")
        #expect(
            dry.stderr.contains(
                "dry run: the real run would fail: Event.owner: 2 links to records that are not in the store"),
            "\(dry.stderr)")
        #expect(tableLines(dry.stdout).contains { $0.hasPrefix("Event ") && $0.contains(" 2 ") }, "\(dry.stdout)")
        #expect(try checksum(store) == before)
        let real = try runCommand(sluice, ["import", "--mapping", strict, "--into", store, dangling])
        #expect(
            real.status != 0 && real.stderr.contains("Event.owner: 2 links to records that are not in the store"),
            "\(real.stderr)")
        #expect(StoreReader(store).count("Event") == 3)
    }

    /// `--dry-run --resume` is a usage error, before the store is touched.
    @Test func aDryRunDoesNotResume() throws {
        let store = try loadedStore()
        let before = try checksum(store)
        let run = try runCommand(
            sluice, ["import", "--mapping", mapping, "--into", store, "--dry-run", "--resume", partial])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--dry-run cannot be combined with --resume"), "\(run.stderr)")
        #expect(try checksum(store) == before)
    }
}
