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
        let night = KilledNight(
            mapping: mapping, days: [Self.all], covered: nil, options: ["--threads", "2", "--delete-missing"],
            next: Self.events((1...60_000).filter { $0 % 10 != 0 }, name: "most60k.jsonl"), unchanged: 54_000,
            attempts: 6, name: "hash", phase: "in the hash pass"
        ) { sync, store, _ in
            // The run has begun: its digest set marked not valid (SQLite's 0, PostgreSQL's f).
            let wasKilled = try killing(store) { poller in
                try Self.killed(sync + ["--into", store]) {
                    ["0", "f"].contains(poller.value("SELECT valid FROM _sluice_digest_state"))
                }
            }
            let removed = Self.number(store, "SELECT count(*) FROM \"_sluice_removed_Event\"")
            return (wasKilled && removed == 0 && Self.count(store, "Event") == 60_000, "\(removed) removed keys")
        }
        try endsWhereAnUninterruptedRunDoes(night, kind)
    }
}
