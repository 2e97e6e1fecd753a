import Foundation
import SluiceTestSupport
import Testing

extension RecordDigestTests {
    /// A change of more keys than the probe holds (``ProbedKeys/maxHeld``,
    /// 100,000) beside kept records: 60,000 new events make 120,000 keys of
    /// their own (Event and its tags' link rows), the last of them past the
    /// held ones; such a run parsed every record, and now spills those keys
    /// sorted to disk and merges them with the kept units' keys, so the kept
    /// records are still skipped. Actor 99, first met in the last new event
    /// (a key spilled) with another login than ten kept events give it, is
    /// mixed: those ten are parsed as well, as a held key's would be. The
    /// night also drops 100 kept events and sweeps with `--delete-missing`;
    /// the store equals a `--no-skip` one's.
    ///
    /// A zero-config run (`--entity --key`) reaches the spill through the
    /// same code, so this test covers it: the probe hands ``ProbedKeys``
    /// each unit's `UnitKeys` entries (table, key bytes, contribution)
    /// whatever mapper made them (`SkipPlan+Probe`), and it holds or spills
    /// them by their count alone; a zero-config run's keys go through the
    /// probe, held, in `zeroConfigSweepsSkipAsFullRunsSweep`. A zero-config
    /// test of its own needs more than 100,000 records (one key each):
    /// 100,500 new events beside 2,000 kept took 64 s (debug build, a
    /// loaded machine) against this test's 38 s, too slow for CI.
    @Test func aChangeOfMoreKeysThanTheProbeHoldsStillSkipsKeptRecords() throws {
        func actor99(_ id: Int, _ login: String) -> String {
            #"{"id": \#(id), "kind": "k0", "score": 1, "actor": {"id": 99, "login": "\#(login)"}, "tags": ["t0"]}"#
        }
        let kept = (1...2_000).map { Self.event($0) } + (2_001...2_010).map { actor99($0, "old") }
        let added = (10_001...70_000).map { Self.event($0) } + [actor99(90_000, "new")]
        let (day0, day1) = (file(kept), file(kept.dropFirst(100) + added))
        let unchanged = try differential(.sqlite, [[day0], ["--delete-missing", day1]])
        #expect(unchanged == [0, 1_900], "\(unchanged)")
    }
}
