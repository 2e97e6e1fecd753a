import Foundation
import SluiceTestSupport
import Testing

/// The shape of the kill tests of a next day: its run killed in one phase,
/// then resumed or run afresh, must end where an uninterrupted run does.
extension SyncCrashTests {
    /// A next day whose run a test kills in a phase of its own.
    struct KilledNight {
        /// The mapping of every run.
        var mapping: String
        /// The files imported into the night's first store, in turn.
        var days: [String]
        /// What the first store's `_sluice_digest_covered` must then give
        /// to `sql` (nil: not checked).
        var covered: (sql: String, rows: [[String?]])?
        /// What the night's run adds to its mapping, before its input.
        var options: [String]
        /// The night's input.
        var next: String
        /// The records the night's run leaves unparsed.
        var unchanged: Int
        /// The events it leaves; nil: as many as ``unchanged``.
        var events: Int?
        /// The records the night's run leaves unparsed when it runs again
        /// after a fresh run; nil: as many as ``unchanged``.
        var unchangedAgain: Int?
        /// The most tries: the even ones resumed, the odd ones run afresh.
        var attempts: Int
        /// What each try's store is named after.
        var name = "crash"
        /// Where the kills must land, for the failure message.
        var phase: String
        /// Whether the run after a fresh one is made only once a fresh run's
        /// kill has landed.
        var againOnlyOnceAFreshKillLanded = false
        /// Checks a try's store once its run after the kill completed.
        var check: (_ store: String) -> Void = { _ in }
        /// Kills the night's run (`sync`, without `--into`) into `store` in
        /// try `attempt`: whether the kill landed in the phase, and what it
        /// left there, for the failure message.
        var kill: (_ sync: [String], _ store: String, _ attempt: Int) throws -> (landed: Bool, left: String)

        /// The night's run, without `--into`.
        var sync: [String] { ["import", "--mapping", mapping] + options + [next] }
    }

    /// Runs `night` into stores of `kind`. An uninterrupted run leaves
    /// `unchanged` records unparsed and `events` events. Then each try, on a
    /// copy of the first store, kills the run (`night.kill`) and resumes it
    /// or runs it afresh: the store the uninterrupted run left, the run
    /// completed; after a fresh run, the night again skips `unchangedAgain` records
    /// and leaves the same store. The tries stop once a kill landed in
    /// the phase both before a resume and before a fresh run, as they must.
    func endsWhereAnUninterruptedRunDoes(_ night: KilledNight, _ kind: RecordDigestTests.Kind) throws {
        let directory = TestPaths.temporaryDirectory()
        let base = try newStore(kind, directory, "base")
        for day in night.days {
            #expect(try runCommand(sluice, ["import", "--mapping", night.mapping, "--into", base, day]).status == 0)
        }
        if let covered = night.covered { #expect(Self.rows(base, covered.sql) == covered.rows) }
        let reference = try copy(of: base, directory, "reference")
        let stats = directory.appendingPathComponent("stats.json").path
        func statistics() throws -> String { try String(contentsOfFile: stats, encoding: .utf8) }
        let skipped = #""unchangedRecords": \#(night.unchanged)"#
        let skippedAgain = #""unchangedRecords": \#(night.unchangedAgain ?? night.unchanged)"#
        let clean = try runCommand(sluice, night.sync + ["--into", reference, "--stats-json", stats])
        #expect(clean.status == 0, "\(clean.stderr)")
        let first = try statistics()
        #expect(first.contains(skipped), "\(first)")
        let expected = dump(reference)
        #expect(expected[0].count == night.events ?? night.unchanged)

        var landed: Set<Bool> = []
        for attempt in 0..<night.attempts where landed.count < 2 {
            let resume = attempt % 2 == 0
            let store = try copy(of: base, directory, "\(night.name)\(attempt)")
            let kill = try night.kill(night.sync, store, attempt)
            if kill.landed { landed.insert(resume) }
            let again = try runCommand(sluice, night.sync + ["--into", store] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(dump(store) == expected, "attempt \(attempt): killed with \(kill.left), the store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
            night.check(store)
            guard !resume && (landed.contains(false) || !night.againOnlyOnceAFreshKillLanded) else { continue }
            #expect(try runCommand(sluice, night.sync + ["--into", store, "--stats-json", stats]).status == 0)
            let next = try statistics()
            #expect(next.contains(skippedAgain), "attempt \(attempt): \(next)")
            #expect(dump(store) == expected)
        }
        #expect(landed == [true, false], "kills landed \(night.phase), resumed then: \(landed)")
    }
}
