import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Every example and benchmark mapping, into an empty store and then onto
/// the store it made (or, for a change file, onto the store its full dump
/// makes), in both apply orders; the two orders must leave the same rows.
/// Before the fix an osmChange file into a new store failed with
/// "dropping the target index: database table is locked" (issue 25): it was
/// only ever tested onto a store that an .osm import had built.
@Suite(.serialized) struct EmptyAndPopulatedStoreTests {
    /// One case: what builds the store first (if anything), then the runs
    /// under test, each a mapping and its inputs.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var populate: [(mapping: String, inputs: [String])] = []
        var runs: [(mapping: String, inputs: [String])]
        var format: InputFormat?
        var testDescription: String { name }
    }

    static func example(_ name: String) -> String {
        TestPaths.repository.appendingPathComponent("Examples/\(name)/mapping.yml").path
    }
    static func benchmark(_ name: String) -> String {
        TestPaths.repository.appendingPathComponent("Benchmarks/\(name).yml").path
    }

    /// The benchmark's generated events (Benchmarks/events.py): a day-0
    /// dataset of 3,000 records in JSON Lines, JSON and XML, day 1 and its
    /// change file. Made once per test process.
    static let events: [String: String] = {
        let directory = TestPaths.temporaryDirectory()
        let script = TestPaths.repository.appendingPathComponent("Benchmarks/events.py").path
        let prefix = directory.appendingPathComponent("day0").path
        let next = directory.appendingPathComponent("day1.jsonl").path
        let change = directory.appendingPathComponent("change.jsonl").path
        _ = try? runCommand("/usr/bin/env", ["python3", script, "dataset", "3000", prefix])
        _ = try? runCommand("/usr/bin/env", ["python3", script, "nextday", "3000", next, "--change", change])
        return [
            "jsonl": prefix + ".jsonl", "json": prefix + ".json", "xml": prefix + ".xml", "day1": next,
            "change": change,
        ]
    }()

    /// The Stack Exchange sample the README imports.
    static let sample: [String] = {
        let folder = TestPaths.repository.appendingPathComponent("Examples/stackexchange/sample")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".xml") }.sorted().map { folder.appendingPathComponent($0).path }
    }()

    static let osmChanges = ["osm/000466354.osc.gz", "osm/008-ch.osc.gz"].map(TestPaths.corpus)

    static let cases: [Case] = [
        Case(name: "osmchange into a new store", runs: [(example("osmchange"), osmChanges)]),
        Case(
            name: "osmchange onto an .osm store", populate: [(example("osm"), [TestPaths.corpus("osm/winthrop.osm")])],
            runs: [(example("osmchange"), osmChanges)]),
        Case(name: "osm", runs: [(example("osm"), [TestPaths.corpus("osm/winthrop.osm")])]),
        Case(name: "stackexchange", runs: [(example("stackexchange"), sample)]),
        Case(
            name: "mediawiki",
            runs: [
                (
                    example("mediawiki"),
                    ["mediawiki/dump.xml", "mediawiki/enwiki-table-markup.xml.bz2"].map(TestPaths.corpus)
                )
            ],
            format: .xml),
        Case(
            name: "overpass", runs: [(example("overpass"), [TestPaths.corpus("json/overpass-response-3.json.gz")])],
            format: .json),
        Case(name: "jenkins", runs: [(example("jenkins"), [TestPaths.corpus("json/apache_builds.json")])]),
        Case(name: "gharchive", runs: [(example("gharchive"), [(try? gharchiveLines()) ?? ""])]),
        Case(
            name: "events",
            runs: [(benchmark("events"), [events["jsonl"] ?? ""]), (benchmark("events"), [events["day1"] ?? ""])]),
        Case(
            name: "events change file into a new store", runs: [(benchmark("events-changes"), [events["change"] ?? ""])]
        ),
        Case(
            name: "events change file onto day 0", populate: [(benchmark("events"), [events["jsonl"] ?? ""])],
            runs: [(benchmark("events-changes"), [events["change"] ?? ""])]),
        Case(name: "events-array", runs: [(benchmark("events-array"), [events["json"] ?? ""])]),
        Case(name: "events-scalars", runs: [(benchmark("events-scalars"), [events["jsonl"] ?? ""])]),
        Case(name: "events-xml", runs: [(benchmark("events-xml"), [events["xml"] ?? ""])]),
    ]

    @Test(arguments: cases) func importsIntoAnEmptyStoreAndOntoAPopulatedOneInBothOrders(_ test: Case) throws {
        var dumps: [[String: [[String?]]]] = []
        for order in [ApplyOrder.key, .input] {
            let store = TestPaths.temporaryDirectory().appendingPathComponent("\(order).sqlite").path
            for (mapping, inputs) in test.populate {
                _ = try Importer(mapping: Mapping.load(path: mapping), store: store).runBlocking(inputs: inputs)
            }
            var options = ImportOptions()
            options.order = order
            options.format = test.format
            for (mapping, inputs) in test.runs {
                // The first run into what populate left (maybe nothing), then
                // the same again onto its result: nothing may change.
                let first = try Importer(mapping: Mapping.load(path: mapping), store: store, options: options)
                    .runBlocking(inputs: inputs)
                #expect(first.records > 0, "\(test.name), \(order): no record read")
                let before = Self.dump(store)
                let again = try Importer(mapping: Mapping.load(path: mapping), store: store, options: options)
                    .runBlocking(inputs: inputs)
                #expect(Self.dump(store) == before, "\(test.name), \(order): the same input again changed the store")
                // In input order a shared object that differs between its
                // occurrences in different batches (a GH Archive repository
                // renamed within the hour) is written by each batch again,
                // ending as it was; key order combines them first.
                let written = again.tables.filter { $0.kind == .entity }.map { $0.inserted + $0.updated + $0.deleted }
                    .reduce(0, +)
                #expect(
                    order == .input || written == 0,
                    "\(test.name), \(order): the same input again wrote \(written) rows: \(again.tables)")
            }
            dumps.append(Self.dump(store))
        }
        #expect(dumps[0].keys.sorted() == dumps[1].keys.sorted())
        for table in dumps[0].keys.sorted() {
            #expect(dumps[0][table] == dumps[1][table], "\(test.name): \(table) differs between key and input order")
        }
    }

    /// Every table's rows, sorted, by table name (sluice's own tables left out).
    static func dump(_ path: String) -> [String: [[String?]]] {
        let reader = StoreReader(path)
        let tables = reader.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_sluice%' ESCAPE '\\'"
        ).map { $0[0] ?? "" }
        var dump: [String: [[String?]]] = [:]
        for table in tables {
            let columns = reader.rows("SELECT name FROM pragma_table_info('\(table)')").map { "\"\($0[0] ?? "")\"" }
            dump[table] = reader.rows("SELECT * FROM \"\(table)\" ORDER BY \(columns.joined(separator: ", "))")
        }
        return dump
    }
}
