import Foundation
import SluiceInput
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import Sluice

/// A source that hands out `chunks` one per read (each cut to the buffer),
/// then `failure` if set, else the end; `gate`, when set, is waited on
/// before every read.
final class ScriptedSource: ByteSource, @unchecked Sendable {
    let name = "scripted"
    private(set) var consumedBytes: Int64 = 0
    let totalBytes: Int64? = nil
    let compression = Compression.none
    private var chunks: [[UInt8]]
    private let failure: InputError?
    private let gate: DispatchSemaphore?

    init(_ chunks: [[UInt8]], failure: InputError? = nil, gate: DispatchSemaphore? = nil) {
        self.chunks = chunks
        self.failure = failure
        self.gate = gate
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        gate?.wait()
        guard !chunks.isEmpty else {
            if let failure { throw failure }
            return 0
        }
        let chunk = chunks.removeFirst()
        let count = min(chunk.count, buffer.count)
        buffer.copyBytes(from: chunk[..<count])
        consumedBytes += Int64(count)
        return count
    }
}

@Suite struct ReadAheadTests {
    @Test func chunksArriveInOrderWithTheBytesConsumedThenTheEnd() throws {
        let chunks = (0..<50).map { index in [UInt8](repeating: UInt8(index), count: 1 + index % 7) }
        let reader = ReadAhead(ScriptedSource(chunks), chunkSize: 16, depth: 3)
        var total: Int64 = 0
        for chunk in chunks {
            let next = try reader.next()
            total += Int64(chunk.count)
            #expect(Array(next.bytes) == chunk)
            #expect(next.consumed == total)
        }
        #expect(try reader.next().bytes.isEmpty)
        #expect(try reader.next().bytes.isEmpty)
    }

    @Test func aReadErrorComesAfterTheChunksReadBeforeIt() throws {
        let failure = InputError.truncated(path: "scripted", format: "gzip", offset: 6)
        let reader = ReadAhead(ScriptedSource([[1, 2, 3], [4, 5, 6]], failure: failure), chunkSize: 8)
        #expect(Array(try reader.next().bytes) == [1, 2, 3])
        #expect(Array(try reader.next().bytes) == [4, 5, 6])
        #expect(throws: failure) { try reader.next() }
    }

    @Test func stoppingDoesNotWaitForAReadThatBlocks() async throws {
        let gate = DispatchSemaphore(value: 1)
        let reader = ReadAhead(ScriptedSource([[1], [2], [3]], gate: gate), chunkSize: 4)
        #expect(Array(try reader.next().bytes) == [1])
        try await Task.sleep(nanoseconds: 100_000_000)
        // The reader is now blocked in its second read, as on a quiet pipe.
        // The gate opens two seconds later; a stop that waited for the
        // reader would return only after that.
        let opened = LockedCounter()
        let opener = Thread {
            Thread.sleep(forTimeInterval: 2)
            opened.increment()
            gate.signal()
            gate.signal()
        }
        opener.start()
        reader.stop()
        #expect(opened.value == 0)
    }
}
