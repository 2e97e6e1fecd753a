import Dispatch

/// Imports driven from async code: progress as an `AsyncSequence`, and
/// inputs that arrive as an `AsyncSequence` of bytes. The parsing and the
/// waits for the store happen on threads of the import's own; the calling
/// task is suspended, never blocking a thread of the cooperative pool.
extension Importer {
    /// Progress reports kept when the consumer falls behind; older reports
    /// are dropped first, the final ``ImportEvent/finished(_:)`` never.
    public static let eventBuffer = 64

    /// Imports `inputs` (paths; `-` is standard input) and yields its
    /// progress, then its report:
    ///
    /// ```swift
    /// for try await event in importer.events(inputs: ["Posts.xml.bz2"]) {
    ///     switch event {
    ///     case .progress(let progress): print(progress.phase, progress.records)
    ///     case .finished(let report): print(report[entity: "Post"]?.inserted ?? 0)
    ///     }
    /// }
    /// ```
    ///
    /// Ending the iteration early (a `break`, or cancelling the task) stops
    /// the import as ``ImportCancellation`` does: the open transaction rolls
    /// back and what was committed stays. The sequence throws the run's
    /// ``ImportError``.
    public func events(inputs: [String]) -> AsyncThrowingStream<ImportEvent, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(Self.eventBuffer)) { continuation in
            let flag = Flag()
            continuation.onTermination = { termination in
                if case .finished = termination { return }
                flag.set()
            }
            Worker {
                do throws(ImportError) {
                    let report = try runBlocking(
                        inputs: inputs, progress: { continuation.yield(.progress($0)) }, cancellation: flag)
                    continuation.yield(.finished(report))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }.detach()
        }
    }

    /// Imports one input whose bytes arrive in pieces, such as a download's
    /// body, named `name` in messages and checkpoints. Each piece is parsed
    /// on a thread of the import's own, which also waits for the store when
    /// batches queue up, so memory stays bounded by the batch limits while
    /// this task is suspended.
    ///
    /// Cancelling the task stops the import (the open transaction rolls
    /// back) and throws ``ImportError/cancelled``. An error the sequence
    /// throws ends it too, after what was parsed before it is committed, and
    /// is rethrown as it is. Either way the ledger records the run.
    public func run<Chunks: AsyncSequence>(
        name: String, format: InputFormat, chunks: Chunks, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws -> ImportReport where Chunks.Element: Sequence<UInt8> {
        let push = try startPush(name: name, format: format, progress: progress)
        let feeder = PushFeeder(push)
        do {
            for try await chunk in chunks {
                try Task.checkCancellation()
                try await feeder.push(Array(chunk))
            }
            try Task.checkCancellation()
        } catch {
            let failure: any Error = error is CancellationError ? ImportError.cancelled : error
            await feeder.abandon(failure)
            throw failure
        }
        return try await feeder.finish()
    }

    /// Imports one input whose bytes arrive one by one (`URLSession`'s
    /// `AsyncBytes`, a file handle's `bytes`), gathered into pieces of
    /// ``ImportOptions/chunkSize`` bytes; see ``run(name:format:chunks:progress:)``.
    public func run<Bytes: AsyncSequence>(
        name: String, format: InputFormat, bytes: Bytes, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws -> ImportReport where Bytes.Element == UInt8 {
        try await run(name: name, format: format, chunks: Chunked(bytes, size: options.chunkSize), progress: progress)
    }
}

/// A ``PushImport`` driven from async code: each call runs on one serial
/// dispatch queue (never the cooperative pool, since a push may wait for the
/// store) and resumes the caller when it is done.
private final class PushFeeder: @unchecked Sendable {
    private let push: PushImport
    private let queue = DispatchQueue(label: "sluice.push")

    init(_ push: PushImport) { self.push = push }

    func push(_ bytes: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.push.push(bytes)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func finish() async throws -> ImportReport {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImportReport, any Error>) in
            queue.async {
                do {
                    continuation.resume(returning: try self.push.finish())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Ends an import stopped by `error`: the store commits nothing more and
    /// the ledger records the run as failed or cancelled.
    func abandon(_ error: any Error) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.push.abandon(error as? ImportError ?? .usage("the input failed: \(error)"))
                continuation.resume()
            }
        }
    }
}

/// Bytes gathered into arrays of `size`.
private struct Chunked<Bytes: AsyncSequence>: AsyncSequence where Bytes.Element == UInt8 {
    let bytes: Bytes
    let size: Int

    init(_ bytes: Bytes, size: Int) {
        self.bytes = bytes
        self.size = Swift.max(1, size)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var inner: Bytes.AsyncIterator
        let size: Int

        mutating func next() async throws -> [UInt8]? {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(size)
            while chunk.count < size, let byte = try await inner.next() { chunk.append(byte) }
            return chunk.isEmpty ? nil : chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inner: bytes.makeAsyncIterator(), size: size) }
}
