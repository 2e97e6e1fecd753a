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
    /// The run starts when the iteration does. Ending the iteration early
    /// (a `break`, or cancelling the task) cancels the import as
    /// ``ImportCancellation`` does, and the loop is left only once the run
    /// has stopped and released the store; a cancelled task's loop throws
    /// ``ImportError/cancelled`` (``ImportEvents`` says how each way ends).
    /// The sequence throws the run's ``ImportError``.
    public func events(inputs: [String]) -> ImportEvents {
        ImportEvents(importer: self, inputs: inputs)
    }

    /// Imports one input whose bytes arrive in pieces, such as a download's
    /// body, named `name` in messages and checkpoints. Each piece is parsed
    /// on a thread of the import's own, which also waits for the store when
    /// batches queue up, so memory stays bounded by the batch limits while
    /// this task is suspended.
    ///
    /// Cancelling the task stops the import (the open transaction rolls
    /// back) and throws ``ImportError/cancelled`` once the run has stopped
    /// and released the store. An error the sequence throws ends the run
    /// too, after what was parsed before it is committed, and is thrown as
    /// ``ImportError/source(_:_:)``. Either way the ledger records the run.
    public func run<Chunks: AsyncSequence>(
        name: String, format: InputFormat, chunks: Chunks, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport where Chunks.Element: Sequence<UInt8> {
        let feeder = PushFeeder(try startPush(name: name, format: format, progress: progress))
        do {
            for try await chunk in chunks {
                try Task.checkCancellation()
                try await feeder.push(Array(chunk)).get()
            }
            try Task.checkCancellation()
        } catch {
            let failure: ImportError
            switch error {
            case let error as ImportError: failure = error
            case is CancellationError: failure = .cancelled
            default: failure = .source(name, error)
            }
            await feeder.abandon(failure)
            throw failure
        }
        return try await feeder.finish().get()
    }

    /// Imports one input whose bytes arrive one by one (`URLSession`'s
    /// `AsyncBytes`, a file handle's `bytes`), gathered into pieces of
    /// ``ImportOptions/chunkSize`` bytes; see ``run(name:format:chunks:progress:)``.
    public func run<Bytes: AsyncSequence>(
        name: String, format: InputFormat, bytes: Bytes, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport where Bytes.Element == UInt8 {
        try await run(name: name, format: format, chunks: Chunked(bytes, size: options.chunkSize), progress: progress)
    }
}

/// A ``PushImport`` driven from async code: each call runs on one serial
/// dispatch queue (never the cooperative pool, since a push may wait for the
/// store) and resumes the caller when it is done.
private struct PushFeeder: Sendable {
    private let push: PushImport
    private let queue = DispatchQueue(label: "sluice.push")

    init(_ push: PushImport) { self.push = push }

    /// Runs `call` on the queue and gives its result.
    private func onQueue<T: Sendable>(_ call: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            queue.async { continuation.resume(returning: call()) }
        }
    }

    func push(_ bytes: [UInt8]) async -> Result<Void, ImportError> {
        await onQueue { [push] in Result { () throws(ImportError) in try push.push(bytes) } }
    }

    func finish() async -> Result<ImportReport, ImportError> {
        await onQueue { [push] in Result { () throws(ImportError) in try push.finish() } }
    }

    /// Ends an import stopped by `error`: the store commits nothing more and
    /// the ledger records the run as failed or cancelled.
    func abandon(_ error: ImportError) async {
        await onQueue { [push] in push.abandon(error) }
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
