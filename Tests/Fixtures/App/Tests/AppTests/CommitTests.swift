import Foundation
import Sluice
import Testing

/// Issue 29, point 2: what a cancelled or failed run keeps, and what a
/// resume recovers, in each apply order, as the getting-started article
/// ("What a cancel keeps") says; a test per statement.
@Suite struct CommitTests {
    /// Key order, cancelled while reading: no row of the run is kept, no
    /// checkpoint either, and a resume reads every input again.
    @Test func keyOrderCancelledWhileReadingKeepsNothing() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events(1...2_000, in: directory)
        let cancellation = ImportCancellation()
        #expect(throws: ImportError.self) {
            try importer(store).runBlocking(
                inputs: [input], progress: { if $0.phase == .reading && $0.records >= 600 { cancellation.cancel() } },
                cancellation: cancellation)
        }
        #expect(try lastRun(store) == .cancelled)
        #expect(try rows(store) == 0)
        #expect(try Status.read(store: store).checkpoints.isEmpty)
        let resumed = try importer(store, resume: true).runBlocking(inputs: [input])
        #expect(resumed.records == 2_000 && resumed[entity: "Event"]?.inserted == 2_000)
    }

    /// Key order, failed while reading (bad input): every record before
    /// the one that failed is applied and committed with its checkpoint,
    /// the batch being filled included.
    @Test func keyOrderFailedWhileReadingKeepsTheRecordsBeforeTheError() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events(1...1_100, in: directory)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: input))
        handle.seekToEndOfFile()
        handle.write(Data("{\"id\": \n".utf8))
        try handle.close()
        #expect(throws: ImportError.self) { try importer(store).runBlocking(inputs: [input]) }
        #expect(try lastRun(store) == .failed)
        // 200 a batch: five full batches, and the 100 records of the sixth, not cut yet.
        #expect(try rows(store) == 1_100)
        #expect(try Status.read(store: store).checkpoints.first?.records == 1_100)
    }

    /// Key order, cancelled while applying: the batches applied before the
    /// cancel stay, the checkpoints (saved last) do not, so a resume reads
    /// every input again and finds those rows unchanged.
    @Test func keyOrderCancelledWhileApplyingKeepsTheBatchesApplied() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events(1...2_000, in: directory)
        let cancellation = ImportCancellation()
        #expect(throws: ImportError.self) {
            try importer(store).runBlocking(
                inputs: [input],
                progress: { if $0.phase == .applying && $0.rowsApplied >= 600 { cancellation.cancel() } },
                cancellation: cancellation)
        }
        #expect(try lastRun(store) == .cancelled)
        let kept = try rows(store)
        #expect(kept == 600)
        #expect(try Status.read(store: store).checkpoints.isEmpty)
        let resumed = try importer(store, resume: true).runBlocking(inputs: [input])
        #expect(resumed.records == 2_000)
        #expect(resumed[entity: "Event"]?.unchanged == kept && resumed[entity: "Event"]?.inserted == 2_000 - kept)
    }

    /// Input order, cancelled: every batch committed before the cancel stays
    /// with its checkpoint, and a resume reads on from the checkpoint.
    @Test func inputOrderCancelledKeepsEachCommittedBatch() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events(1...2_000, in: directory)
        let cancellation = ImportCancellation()
        #expect(throws: ImportError.self) {
            try importer(store, order: .input).runBlocking(
                inputs: [input], progress: { if $0.records >= 600 { cancellation.cancel() } },
                cancellation: cancellation)
        }
        #expect(try lastRun(store) == .cancelled)
        #expect(try rows(store) == 600)
        #expect(try Status.read(store: store).checkpoints.first?.records == 600)
        let resumed = try importer(store, order: .input, resume: true).runBlocking(inputs: [input])
        #expect(resumed[entity: "Event"]?.inserted == 1_400 && resumed[entity: "Event"]?.unchanged == 0)
        #expect(try rows(store) == 2_000)
    }
}
