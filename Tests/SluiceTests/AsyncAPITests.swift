import Foundation
import Sluice
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// The library from async code: progress as an AsyncSequence, inputs as
/// AsyncSequences of bytes, cancellation, file URLs, a Codable report.
@Suite struct AsyncAPITests {
    let mapping = try! Mapping.parse(
        yaml: """
            entities:
              Item:
                records: $
                key: id
                attributes: {id: integer, name: string}
            """)

    func lines(_ range: ClosedRange<Int>) -> String { range.map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined() }

    func importer(_ store: String, rows: Int = 1_000, threads: Int = ImportOptions.defaultThreads) throws -> Importer {
        var options = ImportOptions()
        options.batch.maxRows = rows
        options.threads = threads
        return try Importer(mapping: mapping, store: store, options: options)
    }

    @Test func eventsYieldProgressInPhaseOrderThenTheReport() async throws {
        let input = TestPaths.file("items.jsonl", lines(1...5_000))
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        var phases: [ImportProgress.Phase] = []
        var report: ImportReport?
        for try await event in try importer(store).events(inputs: [input]) {
            switch event {
            case .progress(let progress): phases.append(progress.phase)
            case .finished(let finished): report = finished
            }
        }
        #expect(report?[entity: "Item"]?.inserted == 5_000)
        #expect(phases.first == .reading && phases.last == .done)
        let rank = phases.map { ImportProgress.Phase.allCases.firstIndex(of: $0) ?? 0 }
        #expect(rank == rank.sorted())
    }

    /// The input is a named pipe whose writer holds it open until the
    /// loop has been left, so the import cannot finish first however busy
    /// the machine is.
    @Test func leavingTheEventLoopEarlyCancelsTheImport() async throws {
        let directory = TestPaths.temporaryDirectory()
        let fifo = directory.appendingPathComponent("items.jsonl").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = PipeWriter(path: fifo, text: lines(1...5_000))
        let store = directory.appendingPathComponent("s.sqlite").path
        // One thread, which parses each chunk as it comes: parse threads are
        // handed 64 KiB and more at a time, so the 5,000 records of this pipe,
        // whose writer waits for the loop, would reach the store only at its end.
        for try await event in try importer(store, rows: 500, threads: 1).events(inputs: [fifo]) {
            if case .progress = event { break }
        }
        writer.close()
        // The import notices within a batch; the ledger then says cancelled.
        var status: String?
        for _ in 0..<1_000 {
            status = StoreReader(store).value("SELECT status FROM _sluice_runs ORDER BY id DESC LIMIT 1")
            // "running", or the store still locked by the run's last write.
            if status != "running" && status?.hasPrefix("error:") != true { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(status == "cancelled")
        #expect(StoreReader(store).count("Item") < 5_000)
    }

    @Test func bytesFromAnAsyncSequenceImportLikeAFile() async throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let text = Array(lines(1...3_000).utf8)
        let bytes = AsyncStream<UInt8> { continuation in
            for byte in text { continuation.yield(byte) }
            continuation.finish()
        }
        let report = try await importer(store).run(name: "stream", format: .jsonl, bytes: bytes)
        #expect(report.records == 3_000)
        #expect(StoreReader(store).count("Item") == 3_000)
        // The same bytes again: nothing changes.
        let again = try await importer(store).run(
            name: "stream", format: .jsonl,
            chunks: AsyncStream { continuation in
                continuation.yield(text)
                continuation.finish()
            })
        #expect(again[entity: "Item"]?.unchanged == 3_000)
    }

    struct SourceFailed: Error {}

    @Test func aFailingSourceEndsTheRunAndKeepsWhatWasCommitted() async throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let piece = Array(lines(1...1_000).utf8)
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            continuation.yield(piece)
            continuation.yield(Array(lines(1_001...2_000).utf8))
            continuation.finish(throwing: SourceFailed())
        }
        let error = await #expect(throws: ImportError.self) {
            _ = try await importer(store, rows: 500).run(name: "download", format: .jsonl, chunks: chunks)
        }
        guard case .source("download", let cause) = error else {
            Issue.record("not the source's failure: \(String(describing: error))")
            return
        }
        #expect(cause is SourceFailed)
        let reader = StoreReader(store)
        #expect(reader.value("SELECT status FROM _sluice_runs ORDER BY id DESC LIMIT 1") == "failed")
        #expect(reader.count("Item") == 2_000)
    }

    @Test func cancellingTheTaskStopsAStreamedImport() async throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let (chunks, feed) = AsyncStream.makeStream(of: [UInt8].self)
        feed.yield(Array(lines(1...1_000).utf8))
        let task = Task { try await importer(store, rows: 500).run(name: "endless", format: .jsonl, chunks: chunks) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        feed.yield(Array(lines(1_001...1_010).utf8))
        await #expect(throws: ImportError.self) { _ = try await task.value }
        #expect(StoreReader(store).value("SELECT status FROM _sluice_runs ORDER BY id DESC LIMIT 1") == "cancelled")
    }

    @Test func fileURLsWorkWherePathsDo() async throws {
        let input = URL(fileURLWithPath: TestPaths.file("items.jsonl", lines(1...10)))
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite")
        let report = try await Importer(mapping: mapping, store: store).run(inputs: [input])
        #expect(report.records == 10)
        await #expect(throws: ImportError.self) {
            _ = try await Importer(mapping: mapping, store: store).run(inputs: [
                URL(string: "https://example.org/x.jsonl")!
            ])
        }
    }

    @Test func theReportRoundTripsThroughCodable() async throws {
        let input = TestPaths.file("items.jsonl", lines(1...10))
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let report = try await importer(store).run(inputs: [input])
        let decoded = try JSONDecoder().decode(ImportReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
        #expect(decoded.tables.map(\.name) == ["Item"])
    }
}

/// Writes `text` into a named pipe from a thread of its own, then holds the
/// pipe open until ``close()``.
final class PipeWriter: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(path: String, text: String) {
        let bytes = Array(text.utf8)
        Thread { [done, finished] in
            let fd = open(path, O_WRONLY)
            var written = 0
            while fd >= 0 && written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                written += count
            }
            done.wait()
            if fd >= 0 { _ = Foundation.close(fd) }
            finished.signal()
        }.start()
    }

    /// Closes the pipe: the reader sees its end.
    func close() {
        done.signal()
        finished.wait()
    }
}
