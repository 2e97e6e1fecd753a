import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// A year of nightly runs of dated files must not grow the ledger or the
/// checkpoints without bound (issue 25): a run that ends keeps the newest
/// `ledgerRuns` runs and the checkpoints of the inputs they name. The
/// simulated year itself is Benchmarks/year.py.
@Suite(.serialized) struct LedgerRetentionTests {
    static let mapping = """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, night: integer}
        """

    /// Six nights, each a dated file, into `store` keeping three runs.
    func sixNights(into store: String) throws {
        var options = ImportOptions()
        options.store.ledgerRuns = 3
        let importer = try Importer(mapping: Mapping.parse(yaml: Self.mapping), store: store, options: options)
        for night in 1...6 {
            let dump = TestPaths.file(
                "events-2026-01-0\(night).jsonl",
                (1...50).map { #"{"id": \#($0), "night": \#(night)}"# }.joined(separator: "\n") + "\n")
            let report = try importer.runBlocking(inputs: [dump])
            #expect(report[entity: "Event"]?.updated == (night == 1 ? 0 : 50))
        }
    }

    @Test func sqliteKeepsTheNewestRunsAndTheirCheckpoints() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("year.sqlite").path
        try sixNights(into: store)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT id FROM _sluice_runs ORDER BY id") == [["4"], ["5"], ["6"]])
        let inputs = reader.rows("SELECT input FROM _sluice_checkpoints").map { String(($0[0] ?? "").suffix(16)) }
            .sorted()
        #expect(inputs == ["2026-01-04.jsonl", "2026-01-05.jsonl", "2026-01-06.jsonl"])
        #expect(reader.value("SELECT min(night) FROM Event") == "6")
    }

    @Test func postgresKeepsTheNewestRunsAndTheirCheckpoints() throws {
        let server = try PostgresTestServer.require()
        let database = try server.newDatabase()
        try sixNights(into: database)
        let reader = PostgresReader(database)
        #expect(reader.rows("SELECT id FROM _sluice_runs ORDER BY id") == [["4"], ["5"], ["6"]])
        let inputs = reader.rows("SELECT input FROM _sluice_checkpoints").map { String(($0[0] ?? "").suffix(16)) }
            .sorted()
        #expect(inputs == ["2026-01-04.jsonl", "2026-01-05.jsonl", "2026-01-06.jsonl"])
    }
}
