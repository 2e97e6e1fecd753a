import Foundation
import SluiceTestSupport
import Testing

/// ``DifferentialSyncTests`` against PostgreSQL: the same sequences on two
/// databases of a private server, fewer seeds (`SLUICE_DIFFERENTIAL_PG_SEEDS`);
/// the skipping side's runs must leave records unparsed, or nothing was
/// compared, and some change files must keep the dump's digest set (voiding
/// only the keys they write), or per-key voiding was not compared.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresDifferentialSyncTests {
    static let seeds = Int(ProcessInfo.processInfo.environment["SLUICE_DIFFERENTIAL_PG_SEEDS"] ?? "") ?? 10

    /// Waits until no session but the caller's is left on `database`: a
    /// killed importer's ends once its server process notices.
    static func waitForIdle(_ server: PostgresTestServer, _ database: String) {
        let name = database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let others = PostgresReader(server.conninfo()).value(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
            if others == "0" { return }
            usleep(10_000)
        }
    }

    @Test func skippingRunsLeaveTheDatabaseFullRunsLeave() throws {
        let server = try PostgresTestServer.makePrivate()
        defer { try? server.crash() }
        var unchanged = 0
        var keptAcrossChangeFiles = 0
        for offset in 0..<Self.seeds {
            let directory = TestPaths.temporaryDirectory()
            let sequence = SyncSequence(
                seed: DifferentialSyncTests.firstSeed + UInt64(offset), steps: DifferentialSyncTests.steps,
                records: DifferentialSyncTests.records, directory: directory)
            var sides: [DifferentialSync.Side] = []
            for (name, arguments) in [("skipping", []), ("full", DifferentialSync.fullRunArguments)] {
                let database = try server.newDatabase()
                var side = DifferentialSync.Side(name: name, into: database, arguments: arguments)
                side.settle = { Self.waitForIdle(server, database) }
                side.summarized = { unchanged += DifferentialSync.unchangedRecords($0) }
                sides.append(side)
            }
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
            let failure = try DifferentialSync.run(
                sequence, skipping: sides[0], full: sides[1], contents: DifferentialSync.postgresContents
            ) { planned in
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
            #expect(PostgresReader(sides[1].into).value("SELECT count(*) FROM \"Event\"") != "0")
        }
        // Only the skipping side adds to it: the full side's runs parse every record.
        #expect(unchanged > 0, "no run of the skipping side left a record unparsed")
        #expect(keptAcrossChangeFiles > 0, "no change file kept the dump's digest set")
    }

    /// The fingerprint of the database's digest set when it is valid, else
    /// `invalid`.
    static let validSet =
        "SELECT coalesce((SELECT fingerprint FROM _sluice_digest_state WHERE valid), 'invalid')"

}
