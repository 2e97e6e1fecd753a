import Foundation
import SluiceTestSupport
import Testing

/// Kills of a skipping run over standard input (docs/record-digests.md,
/// "Standard input"): while it spools the stream, and while it records the
/// keys of the records it skips; then resumed or run afresh, it ends in the
/// store an uninterrupted run gives.
extension SyncCrashTests {
    /// A store holding 30,500 events and a valid digest set of 30,000 (so
    /// that Event is not covered and a sweep records its skipped keys), the
    /// next day's stream (27,000 of them), and the store an uninterrupted
    /// skipping run over that stream leaves.
    func standardInputNight(
        _ kind: RecordDigestTests.Kind, _ directory: URL
    ) throws -> (base: String, night: Data, expected: [[[String?]]]) {
        let base = try newStore(kind, directory, "base")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, Self.more]).status == 0)
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, Self.day0]).status == 0)
        let reference = try copy(of: base, directory, "reference")
        let night = try Data(contentsOf: URL(fileURLWithPath: Self.most))
        let clean = try runCommand(sluice, standardInputSync(reference, directory), input: night)
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try skipped(directory) == 27_000)
        let expected = dump(reference)
        #expect(expected[0].count == 27_000)
        return (base, night, expected)
    }

    /// The nightly run into `store` over standard input (JSON Lines, as the
    /// mapping's `$` says: no `--format`, so the fingerprint is the file
    /// runs').
    func standardInputSync(_ store: String, _ directory: URL) -> [String] {
        let stats = directory.appendingPathComponent("stats.json").path
        return ["import", "--mapping", mapping, "--delete-missing", "--into", store, "--stats-json", stats, "-"]
    }

    /// The records the last run with ``standardInputSync(_:_:)``'s
    /// statistics left unparsed.
    func skipped(_ directory: URL) throws -> Int {
        let data = try Data(contentsOf: directory.appendingPathComponent("stats.json"))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["unchangedRecords"] as? Int ?? -1
    }

    /// Killed while it spools the stream (the pipe holds half of it and
    /// stays open), then resumed or run afresh: the store an uninterrupted
    /// run leaves, nothing written by the killed run; the run after the
    /// fresh one skips again.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillWhileStandardInputIsSpooledEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        let directory = TestPaths.temporaryDirectory()
        let (base, night, expected) = try standardInputNight(kind, directory)
        for resume in [true, false] {
            let store = try copy(of: base, directory, "spool\(resume)")
            // The run has begun (its ledger row and the digest set marked
            // not valid: SQLite's 0, PostgreSQL's f).
            let started = "SELECT valid FROM _sluice_digest_state"
            var spooling = Date.distantFuture
            let wasKilled = try killing(store) { poller in
                try Self.killed(standardInputSync(store, directory), input: night, held: night.count / 2) {
                    if ["0", "f"].contains(poller.value(started)) && spooling == .distantFuture { spooling = Date() }
                    return Date().timeIntervalSince(spooling) > 0.3
                }
            }
            #expect(wasKilled, "resume \(resume): the run was not killed while it spooled")
            #expect(Self.count(store, "Event") == 30_500, "resume \(resume): the killed run wrote rows")
            let again = try runCommand(
                sluice, standardInputSync(store, directory) + (resume ? ["--resume"] : []), input: night)
            #expect(again.status == 0, "resume \(resume): \(again.stderr)")
            #expect(dump(store) == expected, "resume \(resume): the store differs")
            #expect(statuses(store).last == "completed", "resume \(resume): \(statuses(store))")
            guard !resume else { continue }
            #expect(try runCommand(sluice, standardInputSync(store, directory), input: night).status == 0)
            #expect(try skipped(directory) == 27_000)
            #expect(dump(store) == expected)
        }
    }

    /// Killed once the stream is spooled, while the keys of the records it
    /// skips are recorded as seen (read from the spool), then resumed or run
    /// afresh: the store an uninterrupted run leaves.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillWhileAStreamsSkippedKeysAreRecordedEndsWhereAnUninterruptedRunDoes(
        kind: RecordDigestTests.Kind
    ) throws {
        let directory = TestPaths.temporaryDirectory()
        let (base, night, expected) = try standardInputNight(kind, directory)
        var landed: Set<Bool> = []
        for attempt in 0..<6 where landed.count < 2 {
            let resume = attempt % 2 == 0
            let store = try copy(of: base, directory, "crash\(attempt)")
            let seen = "SELECT count(*) FROM \"_sluice_seen_Event\""
            let wasKilled = try killing(store) { poller in
                try Self.killed(standardInputSync(store, directory), input: night) { poller.number(seen) > 0 }
            }
            let recorded = Self.number(store, seen)
            if wasKilled && recorded > 0 && Self.count(store, "Event") == 30_500 { landed.insert(resume) }
            let again = try runCommand(
                sluice, standardInputSync(store, directory) + (resume ? ["--resume"] : []), input: night)
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(dump(store) == expected, "attempt \(attempt): killed with \(recorded) keys seen, the store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
        }
        #expect(landed == [true, false], "kills landed while the keys were recorded, resumed then: \(landed)")
    }
}
