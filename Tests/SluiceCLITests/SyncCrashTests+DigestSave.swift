import Foundation
import SluiceTestSupport
import Testing

extension SyncCrashTests {
    /// A next day that doubles the store (15,000 events, then 30,000)
    /// killed while it saves its record digests: every row written, some of
    /// its saves (10,000 units a transaction) committed, not the last, which
    /// marks the set valid. Seen from outside, the set then holds more units
    /// than the day before left and fewer than the day has, and is not
    /// valid. Resumed (a resumed run parses every record and keeps no
    /// digests) or run afresh (it parses every record, the set being
    /// invalid, and makes it anew), the run ends where an uninterrupted run
    /// does, and the run after a fresh one skips all of it. PostgreSQL's twin,
    /// which holds the units' table locked instead of polling, is
    /// `PostgresCLITests.killedWhileSavingTheDigestsEndsWhereAnUninterruptedRunEnds`.
    @Test(arguments: RecordDigestTests.kinds)
    func aKillWhileTheDigestsAreSavedEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        let saving = "SELECT count(*) FROM _sluice_digest_state WHERE units > 15000 AND NOT valid"
        let night = KilledNight(
            mapping: mapping, days: [Self.small], covered: nil, options: [], next: Self.day0, unchanged: 15_000,
            events: 30_000, unchangedAgain: 30_000, attempts: 10, name: "saving", phase: "while the digests were saved"
        ) { sync, store, _ in
            let wasKilled = try killed(sync, into: store, once: saving)
            let units = Self.number(store, "SELECT units FROM _sluice_digest_state")
            let valid = Self.rows(store, "SELECT valid FROM _sluice_digest_state").first?.first ?? nil
            let landed = wasKilled && units > 15_000 && units < 30_000 && (valid == "0" || valid == "f")
            return (landed, "\(units) units kept, valid \(valid ?? "none")")
        }
        try endsWhereAnUninterruptedRunDoes(night, kind)
    }
}
