import Foundation
import SluiceTestSupport
import Testing

/// ``DifferentialSyncTests`` against PostgreSQL: the same sequences on two
/// databases of a private server, in every form SQLite runs them (JSON
/// Lines, one JSON document, XML, more threads, standard input), fewer
/// seeds (`SLUICE_DIFFERENTIAL_PG_SEEDS`);
/// the skipping side's runs must leave records unparsed, or nothing was
/// compared, and some change files must keep the dump's digest set (voiding
/// only the keys they write), or per-key voiding was not compared.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresDifferentialSyncTests {
    static let seeds = Int(ProcessInfo.processInfo.environment["SLUICE_DIFFERENTIAL_PG_SEEDS"] ?? "") ?? 10

    /// The two sides of a sequence, each on a new database of `server`
    /// (the skipping side first), waiting after a stopped run until its
    /// session has ended.
    static func sides(on server: PostgresTestServer, skipping: [String], full: [String]) throws
        -> [DifferentialSync.Side]
    {
        try [("skipping", skipping), ("full", full)].map { name, arguments in
            let database = try server.newDatabase()
            var side = DifferentialSync.Side(name: name, into: database, arguments: arguments)
            side.settle = { waitForIdle(server, database) }
            return side
        }
    }

    /// Waits until no session but the caller's is left on `database`
    /// (``PostgresTestServer/waitForIdle(_:)``).
    static func waitForIdle(_ server: PostgresTestServer, _ database: String) { server.waitForIdle(database) }

    @Test func skippingRunsLeaveTheDatabaseFullRunsLeave() throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        var unchanged = 0
        var keptAcrossChangeFiles = 0
        var afterChangeFiles = 0
        var kept = 0
        for offset in 0..<Self.seeds {
            let directory = TestPaths.temporaryDirectory()
            let sequence = SyncSequence(
                seed: DifferentialSyncTests.firstSeed + UInt64(offset), steps: DifferentialSyncTests.steps,
                records: DifferentialSyncTests.records, directory: directory)
            var sides = try Self.sides(on: server, skipping: [], full: DifferentialSync.fullRunArguments)
            sides[0].summarized = { unchanged += DifferentialSync.unchangedRecords($0) }
            // The valid set a dump left, before a change file (not after another:
            // two change files have one fingerprint), compared after it. A
            // reader a query: a session left open would keep `settle` waiting.
            let skipping = sides[0].into
            var before: String?
            var afterChangeFile = false
            func compare() {
                if let before, PostgresReader(skipping).value(Self.validSet) == before { keptAcrossChangeFiles += 1 }
                before = nil
            }
            // The dangling counts each side keeps equal a recount after every step.
            var wrongCounts: [String] = []
            func checkCounts(_ step: String) {
                for side in sides {
                    wrongCounts += Self.keptCountsAgainstRecounts(side.into).map { "\(side.name) \(step): \($0)" }
                }
            }
            var step = 0
            // A change file that keeps the dump's set keeps the tables it covers.
            var changeFiles = DifferentialSyncTests.ChangeFiles()
            let failure = try DifferentialSync.run(
                sequence, skipping: sides[0], full: sides[1], contents: DifferentialSync.postgresContents
            ) { planned in
                let set = Self.coverage(skipping)
                if let kept = changeFiles.next(planned.step, set) {
                    #expect(
                        kept == set,
                        "seed \(sequence.seed), before \(planned): \(kept), then \(set.map(\.description) ?? "")")
                    if planned.step.deletesMissing { afterChangeFiles += 1 }
                }
                if step > 0 { checkCounts("after step \(step - 1)") }
                step += 1
                compare()
                guard case .changeFile = planned.step else {
                    afterChangeFile = false
                    return
                }
                if !afterChangeFile {
                    before = PostgresReader(skipping).value(Self.validSet).flatMap { $0 == "invalid" ? nil : $0 }
                }
                afterChangeFile = true
            }
            compare()
            #expect(failure == nil, "\(failure ?? "")")
            if failure != nil { return }
            checkCounts("after the last step")
            #expect(wrongCounts.isEmpty, "seed \(sequence.seed): \(wrongCounts)")
            kept += sides.map { PostgresReader($0.into).keptDanglingCounts().values.count { $0 != nil } }.reduce(0, +)
            #expect(PostgresReader(sides[1].into).value("SELECT count(*) FROM \"Event\"") != "0")
        }
        // Only the skipping side adds to it: the full side's runs parse every record.
        #expect(unchanged > 0, "no run of the skipping side left a record unparsed")
        #expect(keptAcrossChangeFiles > 0, "no change file kept the dump's digest set")
        #expect(afterChangeFiles > 0, "no sweep in proportion right after a change file")
        #expect(kept > 0, "no side kept a dangling count")
    }

    /// The same over one JSON document a file (`$.events[*]`, its damaged
    /// dumps damaged between the elements a run skips), a third of the
    /// seeds: the skipping side's runs must leave records unparsed. Then a
    /// tenth of the seeds with the skipping side's every run on two threads,
    /// its inputs read 64 bytes at a time (its workers parse the runs that
    /// skip nothing).
    @Test(arguments: [([String](), 3), (["--threads", "2", "--chunk-size", "64"], 10)])
    func skippingJSONDocumentRunsLeaveTheDatabaseFullRunsLeave(skippingRun: [String], seedShare: Int) throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        var unchanged = 0
        for offset in 0..<max(1, Self.seeds / seedShare) {
            let sequence = SyncSequence(
                seed: DifferentialSyncTests.firstSeed + UInt64(offset), steps: DifferentialSyncTests.steps,
                records: DifferentialSyncTests.records, directory: TestPaths.temporaryDirectory(), format: .json)
            var sides = try Self.sides(on: server, skipping: skippingRun, full: DifferentialSync.fullRunArguments)
            sides[0].summarized = { unchanged += DifferentialSync.unchangedRecords($0) }
            let failure = try DifferentialSync.run(
                sequence, skipping: sides[0], full: sides[1], contents: DifferentialSync.postgresContents)
            #expect(failure == nil, "\(failure ?? "")")
            if failure != nil { return }
        }
        // Only the skipping side adds to it: the full side's runs parse every record.
        #expect(unchanged > 0, "no run of the skipping side left a record unparsed")
    }

    /// A form of the sequences that SQLite's ``DifferentialSyncTests`` runs
    /// in a test of its own, run here on a seed or two.
    struct Form: CustomTestStringConvertible, Sendable {
        var name: String
        var format: SyncSequence.Format = .jsonl
        var records = DifferentialSyncTests.records
        var skippingRun: [String] = []
        var fullRun: [String] = []
        /// Both sides read every dump from standard input.
        var standardInput = false
        var testDescription: String { name }
    }

    /// XML on one thread and on two; JSON Lines on two threads, its inputs
    /// read 64 bytes at a time, and on three over dumps of 3,000 records
    /// (several items of the workers); every dump through standard input.
    static let forms = [
        Form(name: "XML", format: .xml),
        Form(name: "XML on two threads", format: .xml, skippingRun: ["--threads", "2", "--chunk-size", "64"]),
        Form(name: "JSON Lines on two threads", skippingRun: ["--threads", "2", "--chunk-size", "64"]),
        Form(
            name: "JSON Lines on three threads", records: max(DifferentialSyncTests.records, 3_000),
            skippingRun: ["--threads", "3"], fullRun: ["--threads", "1"]),
        Form(name: "standard input", standardInput: true),
    ]

    /// The forms of ``forms``, a tenth of the seeds each: the two
    /// databases agree after every step, and the last dump imported twice
    /// more skips records.
    @Test(arguments: forms) func skippingRunsOfEveryFormLeaveTheDatabaseFullRunsLeave(form: Form) throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        for offset in 0..<max(1, Self.seeds / 10) {
            let sequence = SyncSequence(
                seed: DifferentialSyncTests.firstSeed + UInt64(offset), steps: DifferentialSyncTests.steps,
                records: form.records, directory: TestPaths.temporaryDirectory(), format: form.format)
            var sides = try Self.sides(
                on: server, skipping: form.skippingRun, full: DifferentialSync.fullRunArguments + form.fullRun)
            for index in sides.indices where form.standardInput {
                let database = sides[index].into
                sides[index].standardInput = true
                sides[index].runsRecorded = {
                    Int(PostgresReader(database).value("SELECT count(*) FROM _sluice_runs") ?? "") ?? 0
                }
            }
            let failure = try DifferentialSync.run(
                sequence, skipping: sides[0], full: sides[1], contents: DifferentialSync.postgresContents)
            #expect(failure == nil, "\(form.name): \(failure ?? "")")
            if failure != nil { return }
            #expect(PostgresReader(sides[1].into).value("SELECT count(*) FROM \"Event\"") != "0")
            #expect(
                try DifferentialSyncTests.skipsTheLastDump(sequence, sides[0]),
                "\(form.name), seed \(sequence.seed): nothing skipped")
        }
    }

    /// Each relationship of ``SyncSequence``'s mapping whose count `database`
    /// keeps and knows, with its kept count and its recount where they
    /// differ.
    static func keptCountsAgainstRecounts(_ database: String) -> [String] {
        let recounts = [
            "Event.actor": "SELECT count(*) FROM \"Event\" s WHERE s.actor IS NOT NULL AND NOT EXISTS "
                + "(SELECT 1 FROM \"Actor\" t WHERE t.id = s.actor)",
            "Note.actor": "SELECT count(*) FROM \"Note\" s WHERE s.actor IS NOT NULL AND NOT EXISTS "
                + "(SELECT 1 FROM \"Actor\" t WHERE t.id = s.actor)",
            "Event_tags": "SELECT count(*) FROM \"Event_tags\" l WHERE NOT EXISTS "
                + "(SELECT 1 FROM \"Tag\" t WHERE t.name = l.\"Tag_name\")",
        ]
        let reader = PostgresReader(database)
        var wrong: [String] = []
        for (name, count) in reader.keptDanglingCounts() {
            guard let count, let sql = recounts[name] else { continue }
            let recount = reader.value(sql)
            if recount != count { wrong.append("\(name) kept \(count), recount \(recount ?? "")") }
        }
        return wrong
    }

    /// The coverage of a database's valid digest set
    /// (``DifferentialSyncTests/coverage(_:)``); nil when it has none.
    static func coverage(_ database: String) -> DifferentialSyncTests.Coverage? {
        let reader = PostgresReader(database)
        guard reader.value("SELECT to_regclass('_sluice_digest_covered') IS NOT NULL") == "t",
            let fingerprint = reader.value("SELECT fingerprint FROM _sluice_digest_state WHERE valid")
        else { return nil }
        return DifferentialSyncTests.Coverage(
            fingerprint: fingerprint,
            covered: reader.rows("SELECT entity FROM _sluice_digest_covered ORDER BY 1").map { $0[0] ?? "" })
    }

    /// The fingerprint of the database's digest set when it is valid, else
    /// `invalid`.
    static let validSet =
        "SELECT coalesce((SELECT fingerprint FROM _sluice_digest_state WHERE valid), 'invalid')"

}
