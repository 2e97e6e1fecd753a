import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The key-ordered apply against input order on the real corpora: every
/// table must hold the same rows, and each entity the same inserted count.
@Suite(.serialized) struct KeyOrderEndToEndTests {
    func importBoth(_ name: String, _ files: [String], format: InputFormat? = nil) throws {
        var stores: [StoreReader] = []
        var reports: [ImportReport] = []
        for order in [ApplyOrder.input, .key] {
            var options = ImportOptions()
            options.format = format
            options.order = order
            // Small runs and batches: many spills, merges and transactions.
            options.sort.memoryBytes = 256 << 10
            options.sort.fanIn = 4
            options.batch.maxRows = 700
            let store = TestPaths.temporaryDirectory().appendingPathComponent("\(name)-\(order).sqlite").path
            reports.append(
                try Importer(mapping: example(name), store: store, options: options).runBlocking(inputs: files))
            stores.append(StoreReader(store))
        }
        let tables = stores[0].rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_sluice%' ESCAPE '\\' ORDER BY 1"
        )
        .map { $0[0] ?? "" }
        #expect(tables.count >= 2)
        for table in tables {
            let columns = stores[0].rows("SELECT name FROM pragma_table_info('\(table)')").map { "\"\($0[0] ?? "")\"" }
            let sql = "SELECT * FROM \"\(table)\" ORDER BY \(columns.joined(separator: ", "))"
            let (input, key) = (stores[0].rows(sql), stores[1].rows(sql))
            #expect(
                input.count == key.count,
                "\(name): \(table) has \(input.count) rows in input order, \(key.count) in key order")
            #expect(input == key, "\(name): \(table) differs")
        }
        #expect(reports[0].entities.map(\.counts.inserted) == reports[1].entities.map(\.counts.inserted))
        #expect(reports[0].dangling == reports[1].dangling)
    }

    @Test func openStreetMapWithNodeListsMembersAndStubs() throws {
        try importBoth("osm", [TestPaths.corpus("osm/liechtenstein-2013-08-03.osm.bz2")], format: .xml)
    }

    @Test func stackExchangeSiteWithReferences() throws {
        try importBoth("stackexchange", stackExchangeFiles())
    }

    @Test func ghArchiveEventsWithSharedActorsAndRepos() throws {
        try importBoth("gharchive", [gharchiveLines()])
    }
}
