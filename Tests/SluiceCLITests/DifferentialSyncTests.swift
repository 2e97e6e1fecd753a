import Foundation
import SluiceTestSupport
import Testing

/// Skipping runs against full runs (``DifferentialSync``) on random
/// sequences of nightly runs, SQLite stores. `SLUICE_DIFFERENTIAL_SEEDS`,
/// `SLUICE_DIFFERENTIAL_SEED` (the first), `SLUICE_DIFFERENTIAL_RECORDS`
/// and `SLUICE_DIFFERENTIAL_STEPS` change the scale
/// (Benchmarks/differential.py runs one sequence of 200,000 records).
@Suite struct DifferentialSyncTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seeds = Int(environment["SLUICE_DIFFERENTIAL_SEEDS"] ?? "") ?? 200
    static let firstSeed = UInt64(environment["SLUICE_DIFFERENTIAL_SEED"] ?? "") ?? 20_261_125
    static let records = Int(environment["SLUICE_DIFFERENTIAL_RECORDS"] ?? "") ?? 24
    static let steps = Int(environment["SLUICE_DIFFERENTIAL_STEPS"] ?? "") ?? 6
    /// The seeds are run in this many groups, in parallel.
    static let groups = 8

    /// The seeds of the XML form, run in the same groups: fewer, since the
    /// sequences differ from the JSON ones only in the form of their files.
    static let xmlSeeds = max(1, seeds / 8)

    /// The seeds whose skipping side parses on two threads, fewer again
    /// (seeds / 16, as the document forms on two threads): the sequences
    /// are the JSON ones.
    static let threadSeeds = max(1, seeds / 16)

    /// A sequence of dumps in `format` and two SQLite sides in a new
    /// directory; the full side's change files in input order.
    static func setUp(
        seed: UInt64, fullRun: [String], format: SyncSequence.Format = .jsonl, skippingRun: [String] = [],
        records: Int = records
    ) -> (SyncSequence, DifferentialSync.Side, DifferentialSync.Side) {
        let directory = TestPaths.temporaryDirectory()
        let sequence = SyncSequence(seed: seed, steps: steps, records: records, directory: directory, format: format)
        let skipping = DifferentialSync.Side(
            name: "skipping", into: directory.appendingPathComponent("skipping.sqlite").path, arguments: skippingRun)
        var full = DifferentialSync.Side(
            name: "full", into: directory.appendingPathComponent("full.sqlite").path, arguments: fullRun)
        full.changeFileArguments = ["--order", "input"]
        return (sequence, skipping, full)
    }

    /// Every seed of a group: the two stores agree after every step; and
    /// some steps sweep in proportion to the change (their store's digest
    /// set valid and covering a table when a `--delete-missing` run starts),
    /// some of them right after change files that kept the dump's set: a
    /// change file that keeps the set keeps the tables it covers (its keys
    /// are the next sweep's candidates), and the store after the sweep still
    /// equals the full side's.
    @Test(arguments: 0..<groups) func skippingRunsLeaveTheStoreFullRunsLeave(group: Int) throws {
        var inProportion = 0
        var afterChangeFiles = 0
        let agreed = try Self.runGroup(
            group, of: Self.seeds,
            before: { sequence, skipping in
                var changeFiles = Self.ChangeFiles()
                return { planned in
                    if planned.step.deletesMissing && Self.coversATable(skipping.into) { inProportion += 1 }
                    let set = Self.coverage(skipping.into)
                    guard let kept = changeFiles.next(planned.step, set) else { return }
                    #expect(
                        kept == set,
                        "seed \(sequence.seed), before \(planned): \(kept), then \(set.map(\.description) ?? "")")
                    if planned.step.deletesMissing { afterChangeFiles += 1 }
                }
            })
        guard agreed else { return }
        #expect(inProportion > 0 || Self.seeds < Self.groups * 4, "group \(group): no sweep in proportion")
        #expect(
            afterChangeFiles > 0 || Self.seeds < Self.groups * 4,
            "group \(group): no sweep in proportion right after a change file")
    }

    /// Runs the seeds of `group` among the first `seeds` (every
    /// ``groups``th from ``firstSeed`` + `group`), a sequence each, set up
    /// by ``setUp(seed:fullRun:format:skippingRun:records:)`` and `prepare`:
    /// the two sides agree after every step and the full side stores events;
    /// with `skips`, the last dump imported twice more skips records
    /// (``skipsTheLastDump(_:_:)``). `before`, made for each seed, is given
    /// each step before its runs. Returns false at the first seed whose
    /// sides differ, the group's later seeds not run.
    static func runGroup(
        _ group: Int, of seeds: Int, format: SyncSequence.Format = .jsonl, fullRun: [String] = [],
        skippingRun: [String] = [], records: Int = records, skips: Bool = false,
        prepare: (inout DifferentialSync.Side, inout DifferentialSync.Side) -> Void = { _, _ in },
        before: (SyncSequence, DifferentialSync.Side) -> (SyncSequence.PlannedStep) -> Void = { _, _ in { _ in } }
    ) throws -> Bool {
        for offset in stride(from: group, to: seeds, by: groups) {
            var (sequence, skipping, full) = setUp(
                seed: firstSeed + UInt64(offset), fullRun: DifferentialSync.fullRunArguments + fullRun,
                format: format, skippingRun: skippingRun, records: records)
            prepare(&skipping, &full)
            let failure = try DifferentialSync.run(
                sequence, skipping: skipping, full: full, contents: DifferentialSync.sqliteContents,
                before: before(sequence, skipping))
            #expect(failure == nil, "\(failure ?? "")")
            if failure != nil { return false }
            #expect(StoreReader(full.into).count("Event") > 0, "seed \(sequence.seed): no events stored")
            if skips { #expect(try skipsTheLastDump(sequence, skipping), "seed \(sequence.seed): nothing skipped") }
        }
        return true
    }

    /// What a valid digest set was made under and the tables it covers.
    struct Coverage: Equatable, CustomStringConvertible {
        var fingerprint: String
        var covered: [String]

        var description: String { "covering \(covered)" }
    }

    /// The coverage of a SQLite store's valid digest set; nil when the
    /// store has no valid set.
    static func coverage(_ path: String) -> Coverage? {
        let reader = StoreReader(path)
        guard reader.value("SELECT valid FROM _sluice_digest_state") == "1" else { return nil }
        return Coverage(
            fingerprint: reader.value("SELECT fingerprint FROM _sluice_digest_state") ?? "",
            covered: reader.rows("SELECT entity FROM _sluice_digest_covered ORDER BY 1").map { $0[0] ?? "" })
    }

    /// Follows the change files of a sequence, step by step, for the
    /// coverage they must keep: that of a set that covered a table when a
    /// run of change files began.
    struct ChangeFiles {
        private var before: Coverage?
        private var inRun = false

        /// Given each step before it runs, with the store's coverage then:
        /// at the first step after a run of change files, the coverage before
        /// them when the set they leave is still the dump's (one that read or
        /// voided too much made a set of its own, under its fingerprint and
        /// covering nothing); else nil.
        mutating func next(_ step: SyncSequence.Step, _ coverage: Coverage?) -> Coverage? {
            if case .changeFile = step {
                if !inRun { before = coverage?.covered.isEmpty == false ? coverage : nil }
                inRun = true
                return nil
            }
            defer { (before, inRun) = (nil, false) }
            guard inRun, let before, coverage?.fingerprint == before.fingerprint else { return nil }
            return before
        }
    }

    /// Whether the SQLite store at `path` holds a valid digest set that
    /// covers a table (``DigestSet/covered``): a run that sweeps it then
    /// sweeps in proportion to the change.
    static func coversATable(_ path: String) -> Bool {
        let reader = StoreReader(path)
        return reader.value("SELECT valid FROM _sluice_digest_state") == "1"
            && Int(reader.value("SELECT count(*) FROM _sluice_digest_covered") ?? "") ?? 0 > 0
    }

    /// The same in XML: each record an element of a document whose DOCTYPE
    /// and namespace declaration are every unit's context.
    @Test(arguments: 0..<groups) func skippingXMLRunsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(group, of: Self.xmlSeeds, format: .xml, skips: true)
    }

    /// The seeds of the JSON document form, run in the same groups: fewer,
    /// like the XML ones.
    static let documentSeeds = max(1, seeds / 8)

    /// The same over one JSON document a file: each record an element of
    /// its `events` array, between other members (`$.events[*]`), its
    /// damaged dumps damaged between the elements a run skips.
    @Test(arguments: 0..<groups) func skippingJSONDocumentRunsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(group, of: Self.documentSeeds, format: .json, skips: true)
    }

    /// The seeds of the document forms on two threads, half those of their
    /// one-thread forms: at the default 24 records a document is one item of
    /// the workers, so these sequences differ from the one-thread ones in
    /// who parses that item. (At seeds / 8 each, the two were a seventh of
    /// the suite's 358 sequences, which took 27% of the tests' CPU.)
    static let documentThreadSeeds = max(1, seeds / 16)

    /// The XML form with the skipping side's every run on two threads, its
    /// inputs read 64 bytes at a time: its workers parse the runs that skip
    /// nothing (first imports, resumes of them, change files); the runs that
    /// skip hash on the workers, the forwarder checking the document around
    /// the units, and parse on one thread. At the default 24 records a document is one
    /// item; `SLUICE_DIFFERENTIAL_RECORDS=3000` cuts each into several, each
    /// parsed after its context.
    @Test(arguments: 0..<groups) func skippingXMLRunsOnTwoThreadsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(
            group, of: Self.documentThreadSeeds, format: .xml, skippingRun: ["--threads", "2", "--chunk-size", "64"])
    }

    /// The JSON document form with the skipping side's every run on two
    /// threads, its inputs read 64 bytes at a time: its workers parse the
    /// runs that skip nothing, each item as one value after the path to its
    /// first element, the damage between elements found where one thread
    /// finds it; the runs that skip parse on one thread. At the default 24
    /// records a document is one item; `SLUICE_DIFFERENTIAL_RECORDS=3000`
    /// cuts each into several.
    @Test(arguments: 0..<groups)
    func skippingJSONDocumentRunsOnTwoThreadsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(
            group, of: Self.documentThreadSeeds, format: .json, skippingRun: ["--threads", "2", "--chunk-size", "64"])
    }

    /// The same with the skipping side's every run (first imports, skipping
    /// runs, kills and their resumes) on two threads, its inputs read 64
    /// bytes at a time (records cross chunks): its workers hash the units
    /// and parse the selected ones.
    @Test(arguments: 0..<groups) func skippingRunsOnTwoThreadsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(group, of: Self.threadSeeds, skippingRun: ["--threads", "2", "--chunk-size", "64"])
    }

    /// The seeds of the three-thread sequences, fewer again: their dumps
    /// are a hundred times larger.
    static let threeThreadSeeds = max(1, seeds / 25)

    /// The same with the skipping side's every run on three threads and
    /// the full side's on one, over dumps of 3,000 records (about 400 KB,
    /// two or more of the workers' items): the hash pass of each run that
    /// skips hashes the units on the workers, each item's digests sorted in
    /// input order.
    @Test(arguments: 0..<groups) func skippingRunsOnThreeThreadsLeaveTheStoreFullRunsLeave(group: Int) throws {
        _ = try Self.runGroup(
            group, of: Self.threeThreadSeeds, fullRun: ["--threads", "1"], skippingRun: ["--threads", "3"],
            records: max(Self.records, 3_000), skips: true)
    }

    /// The seeds whose two sides read every dump from standard input,
    /// likewise fewer: the sequences are the JSON ones.
    static let standardInputSeeds = max(1, seeds / 8)

    /// The same with both sides' every run of a dump (first imports,
    /// skipping runs, kills and their resumes, mapping changes) reading it
    /// from standard input: the skipping side spools the stream and skips
    /// from the spool, and the group's runs skip records. A run is stopped
    /// only once it has recorded itself (its `--resume` would otherwise
    /// resume an earlier run of `-`).
    @Test(arguments: 0..<groups) func skippingRunsOverStandardInputLeaveTheStoreFullRunsLeave(group: Int) throws {
        var skipped = 0
        let agreed = try Self.runGroup(
            group, of: Self.standardInputSeeds,
            prepare: { skipping, full in
                skipping.standardInput = true
                full.standardInput = true
                let (skippingStore, fullStore) = (skipping.into, full.into)
                skipping.runsRecorded = { StoreReader(skippingStore).count("_sluice_runs") }
                full.runsRecorded = { StoreReader(fullStore).count("_sluice_runs") }
                skipping.summarized = { skipped += DifferentialSync.unchangedRecords($0) }
            })
        guard agreed else { return }
        #expect(skipped > 0 || Self.standardInputSeeds <= group, "group \(group): nothing skipped")
    }

    /// Whether the last dump of `sequence`, imported twice more by `side`,
    /// skips records the second time: the XML sequences skip, not only agree.
    static func skipsTheLastDump(_ sequence: SyncSequence, _ side: DifferentialSync.Side) throws -> Bool {
        guard let last = sequence.steps.last(where: { $0.step.dump != nil }), let dump = last.step.dump else {
            return false
        }
        let stats = TestPaths.temporaryDirectory().appendingPathComponent("stats.json").path
        for _ in 0..<2 {
            let result = try runCommand(
                DifferentialSync.binary,
                ["import", "--mapping", last.mapping, "--into", side.into, "--stats-json", stats] + dump.files)
            guard result.status == 0 else { return false }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: stats))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (object?["unchangedRecords"] as? Int ?? 0) > 0
    }

    /// The harness catches a difference: a full side whose runs insert only
    /// (`--mode insert-only`, so that no edit reaches its store) is found
    /// different, with the seed, the steps and the first differing row.
    @Test func aPlantedDifferenceIsCaught() throws {
        var caught: [String] = []
        for offset in 0..<4 {
            let (sequence, skipping, full) = Self.setUp(
                seed: Self.firstSeed + UInt64(offset),
                fullRun: DifferentialSync.fullRunArguments + ["--mode", "insert-only"])
            if let failure = try DifferentialSync.run(
                sequence, skipping: skipping, full: full, contents: DifferentialSync.sqliteContents)
            {
                caught.append(failure)
            }
        }
        #expect(caught.count >= 3, "\(caught)")
        let message = caught.first ?? ""
        #expect(message.hasPrefix("seed \(Self.firstSeed)"), "\(message)")
        #expect(message.contains("sorted row") && message.contains("steps:\n") && message.contains("→"), "\(message)")
    }

    /// The seeds cover every kind of step, and the sequence dump → change
    /// file → that dump again.
    @Test func theSeedsCoverEveryKindOfStep() {
        var seen: Set<String> = []
        for offset in 0..<Self.seeds {
            let sequence = SyncSequence(
                seed: Self.firstSeed + UInt64(offset), steps: Self.steps, records: Self.records,
                directory: TestPaths.temporaryDirectory())
            for (index, planned) in sequence.steps.enumerated() {
                let text = "\(planned)"
                for kind in Self.kinds where text.contains(kind) { seen.insert(kind) }
                guard index > 0, case .changeFile = sequence.steps[index - 1].step, let files = planned.step.dump?.files
                else { continue }
                if sequence.steps[..<index].contains(where: { $0.step.dump?.files == files }) {
                    seen.insert("change file, then the dump before it")
                }
            }
        }
        #expect(seen == Set(Self.kinds + ["change file, then the dump before it"]))
    }

    /// The XML seeds cover every damage between elements: a bare `&`, a `<`
    /// in text, the root's end tag misnamed or missing, a file cut short.
    @Test func theXMLSeedsCoverEveryDamage() {
        let damages = [#"" & ""#, #"" a < b""#, "misnamed", "missing", "cut after"]
        #expect(Self.damages(of: Self.xmlSeeds, format: .xml, among: damages) == Set(damages))
    }

    /// Which of `damages` the damaged steps of the first `seeds` seeds'
    /// sequences in `format` name.
    static func damages(of seeds: Int, format: SyncSequence.Format, among damages: [String]) -> Set<String> {
        var seen: Set<String> = []
        for offset in 0..<seeds {
            let sequence = SyncSequence(
                seed: firstSeed + UInt64(offset), steps: steps, records: records,
                directory: TestPaths.temporaryDirectory(), format: format)
            for planned in sequence.steps {
                guard case .damaged(_, let damage, _) = planned.step else { continue }
                for kind in damages where damage.contains(kind) { seen.insert(kind) }
            }
        }
        return seen
    }

    /// The JSON document seeds cover every damage between elements: a word
    /// or a missing comma after one, the array's or the document's end
    /// missing, the value of the member after the array missing, a file cut
    /// short.
    @Test func theJSONDocumentSeedsCoverEveryDamage() {
        let damages = [#"" x""#, "comma missing", "array's end", "document's end", "member after", "cut after"]
        #expect(Self.damages(of: Self.documentSeeds, format: .json, among: damages) == Set(damages))
    }

    /// The words that mark each kind of step in its description.
    static let kinds = [
        "--delete-missing", "--allow-empty-delete", "--order input", "from standard input", "change file",
        "attribute extra added",
        "score's type made string", "killed", "interrupted (SIGINT)", "then --resume", "then a fresh run",
    ]

    /// The comparison sees a value's type, a row more and a column's type.
    @Test func theComparisonSeesEveryColumnAndType() {
        let table = DifferentialSync.Table(name: "Event", columns: ["id INTEGER", "kind TEXT"], rows: [["1", "'a'"]])
        var retyped = table
        retyped.rows = [["'1'", "'a'"]]
        var longer = table
        longer.rows.append(["2", "'b'"])
        var recolumned = table
        recolumned.columns[1] = "kind INTEGER"
        #expect(DifferentialSync.firstDifference([table], [table]) == nil)
        #expect(
            DifferentialSync.firstDifference([table], [retyped])?.contains("skipping (1, 'a'), full ('1', 'a')") == true
        )
        #expect(DifferentialSync.firstDifference([table], [longer])?.contains("row 2: skipping (none)") == true)
        #expect(DifferentialSync.firstDifference([table], [recolumned])?.contains("columns") == true)
        #expect(DifferentialSync.firstDifference([table], [])?.contains("the tables differ") == true)
    }
}
