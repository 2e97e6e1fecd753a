import Foundation
import SluiceTestSupport
import Testing

/// A next day killed in its hash pass on the parse workers (`--threads 2`).
extension SyncCrashTests {
    /// Killed once the run has begun and before it records anything of its
    /// plan (the hash pass, on the workers), then resumed or run afresh: the
    /// store an uninterrupted run leaves, nothing written by the killed
    /// run; the run after the fresh one skips again.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillInTheHashPassOnTheWorkersEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        let directory = TestPaths.temporaryDirectory()
        let day0 = all
        let most = Self.events((1...60_000).filter { $0 % 10 != 0 }, name: "most60k.jsonl")
        let base = try newStore(kind, directory, "base")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, day0]).status == 0)
        let reference = try copy(of: base, directory, "reference")
        let sync = ["import", "--mapping", mapping, "--threads", "2", "--delete-missing", most]
        let stats = directory.appendingPathComponent("stats.json").path
        func skipped() throws -> String { try String(contentsOfFile: stats, encoding: .utf8) }
        let clean = try runCommand(sluice, sync + ["--into", reference, "--stats-json", stats])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try skipped().contains(#""unchangedRecords": 54000"#))
        let expected = dump(reference)
        #expect(expected[0].count == 54_000)

        var landed: Set<Bool> = []
        for attempt in 0..<6 where landed.count < 2 {
            let resume = attempt % 2 == 0
            let store = try copy(of: base, directory, "hash\(attempt)")
            // The run has begun: its digest set marked not valid (SQLite's 0, PostgreSQL's f).
            let wasKilled = try killing(store) { poller in
                try Self.killed(sync + ["--into", store]) {
                    ["0", "f"].contains(poller.value("SELECT valid FROM _sluice_digest_state"))
                }
            }
            let removed = Self.number(store, "SELECT count(*) FROM \"_sluice_removed_Event\"")
            if wasKilled && removed == 0 && Self.count(store, "Event") == 60_000 { landed.insert(resume) }
            let again = try runCommand(sluice, sync + ["--into", store] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(dump(store) == expected, "attempt \(attempt): the store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
            guard !resume else { continue }
            #expect(try runCommand(sluice, sync + ["--into", store, "--stats-json", stats]).status == 0)
            #expect(try skipped().contains(#""unchangedRecords": 54000"#), "attempt \(attempt)")
            #expect(dump(store) == expected)
        }
        #expect(landed == [true, false], "kills landed in the hash pass, resumed then: \(landed)")
    }
}
