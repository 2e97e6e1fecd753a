import Foundation
import SluiceTestSupport
import Testing

@testable import Sluice

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

    /// A cancel while the parse side fills the queue from one chunk of
    /// small records: before the fix the store thread stopped taking groups
    /// and the parse side waited forever to push the next one.
    @Test func cancellingWhileTheQueueIsFullStopsTheParseToo() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"
        var options = ImportOptions()
        options.batch.maxRows = 1
        options.order = .input
        let input = TestPaths.file("in.jsonl", lines(1...200))
        let cancellation = ImportCancellation()
        let hooks = ["E": EntityHooks(willImport: { if $0.ordinal == 2 { cancellation.cancel() } })]
        let importer = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options, hooks: hooks)
        let outcome = Shared<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            do {
                _ = try importer.runBlocking(inputs: [input], cancellation: cancellation)
                outcome.set("completed")
            } catch {
                outcome.set("\(error)")
            }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(outcome.value == "\(ImportError.cancelled)")
        #expect(StoreReader(store).count("E") < 200)
    }
}
