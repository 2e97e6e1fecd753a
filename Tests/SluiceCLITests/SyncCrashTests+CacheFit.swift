import Foundation
import SluiceTestSupport
import Testing

/// Kills of a change file whose key-ordered batches are cut to fit the page
/// cache (`CacheFittedRows`): scattered updates into a store that holds
/// rows go in many small transactions; killed between them, then resumed
/// or run afresh, the run ends in the store an uninterrupted run gives.
extension SyncCrashTests {
    /// Events `ids` as ``events(_:name:)`` writes them but with another
    /// score and tags, so that each is an update of the stored event.
    static func changedEvents(_ ids: [Int], name: String) -> String {
        var generator = SplitMix(seed: 11)
        let lines = ids.shuffled(using: &generator).map { id in
            #"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(id * 3 + 1), "tags": ["w\#(id % 4)"]}"#
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    @Test func aKillBetweenCacheFittedBatchesEndsWhereAnUninterruptedRunDoes() throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        // 1 MiB of 4 KiB pages: 256 pages, so that every 7th of 60,000 events
        // (8,571 scattered updates over about 400 leaf pages) overflows it.
        let small = ["--page-size", "4096", "--cache-mib", "1"]
        #expect(
            try runCommand(sluice, ["import", "--mapping", mapping, "--into", base] + small + [Self.all]).status == 0)
        let changes = Self.changedEvents((1...60_000).filter { $0 % 7 == 0 }, name: "changes.jsonl")
        let reference = directory.appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: reference)
        let sync = ["import", "--mapping", mapping, "--no-skip"] + small + [changes]
        let clean = try runCommand(sluice, sync + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        let changedSQL = "SELECT count(*) FROM Event WHERE score % 3 = 1"
        #expect(StoreReader(reference).value(changedSQL) == "8571")
        #expect(expected[0].count == 60_000)

        var landed: Set<Bool> = []
        for attempt in 0..<8 where landed.count < 2 {
            let resume = attempt % 2 == 0
            let store = directory.appendingPathComponent("crash\(attempt).sqlite").path
            try FileManager.default.copyItem(atPath: base, toPath: store)
            let wasKilled = try Self.killed(sync + ["--into", store]) {
                Int(StoreReader(store).value(changedSQL) ?? "0") ?? 0 > 0
            }
            let changed = Int(StoreReader(store).value(changedSQL) ?? "0") ?? 0
            // Uncut, the first Event batch committed 5,000 updates at once.
            if wasKilled && changed > 0 && changed < 5_000 { landed.insert(resume) }
            let again = try runCommand(sluice, sync + ["--into", store] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(dump(store) == expected, "attempt \(attempt): killed with \(changed) changed, the store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
        }
        #expect(landed == [true, false], "kills landed between the first batches, resumed then: \(landed)")
    }
}
