import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct CancellationTests {
    /// A cancel during the key-ordered apply (the input read, some tables
    /// committed): before the fix the run finished every record.
    @Test func cancellingDuringTheKeyOrderedApplyStopsIt() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"
        var options = ImportOptions()
        options.batch.maxRows = 200
        let input = TestPaths.file("in.jsonl", lines((1...40_000).reversed()))
        let cancellation = ImportCancellation()
        let watcher = Thread {
            while StoreReader(store).count("E") <= 0 { usleep(500) }
            cancellation.cancel()
        }
        watcher.start()
        #expect(throws: ImportError.self) {
            try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options)
                .runBlocking(inputs: [input], cancellation: cancellation)
        }
        #expect(cancellation.isCancelled)
        #expect(StoreReader(store).count("E") < 40_000)
        #expect(try Status.read(store: store).runs.first?.status == .cancelled)
    }
}
