/// An import fed by the caller, chunk by chunk; from ``Importer/startPush(name:format:progress:)``.
///
/// Not thread-safe: push from one thread or task at a time. ``push(_:)-(UnsafeRawBufferPointer)``
/// parses on the calling thread and blocks while the store catches up (at
/// most `BatchLimits.queueDepth` groups and `BatchLimits.maxBytes` wait), so memory stays bounded.
public final class PushImport {
    private let pipeline: ImportPipeline
    private var finished = false
    private var pushed: Int64 = 0

    init(pipeline: ImportPipeline) {
        self.pipeline = pipeline
    }

    /// Parses the next bytes of the input. O(bytes).
    ///
    /// - Throws: ``ImportError`` for malformed input or a store failure; the
    ///   import cannot continue after an error.
    public func push(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        guard !finished else { throw .usage("push after finish") }
        do {
            pushed += Int64(bytes.count)
            try pipeline.feed(bytes, raw: pushed)
        } catch {
            finished = true
            pipeline.drain()
            pipeline.record(failure: error)
            throw error
        }
    }

    /// Parses the next bytes of the input.
    public func push(_ bytes: [UInt8]) throws(ImportError) {
        do {
            try bytes.withUnsafeBytes { raw in try push(raw) }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
    }

    /// Ends the input: it must be complete. Waits for every batch to commit
    /// and returns the counts.
    public func finish() throws(ImportError) -> ImportReport {
        guard !finished else { throw .usage("finish called twice") }
        finished = true
        do {
            try pipeline.endInput()
        } catch {
            pipeline.drain()
            pipeline.record(failure: error)
            throw error
        }
        return try pipeline.finish()
    }

    /// Ends an import whose input failed outside sluice (the caller's
    /// source threw `error`): what was committed stays, the ledger records
    /// the run as failed (cancelled for ``ImportError/cancelled``).
    public func abandon(_ error: ImportError) {
        guard !finished else { return }
        finished = true
        if case .cancelled = error { pipeline.cancel() }
        pipeline.drain()
        pipeline.record(failure: error)
    }

    /// Stops the import: the batch being written rolls back; committed
    /// batches stay. Safe to call from any thread.
    public func cancel() {
        pipeline.cancel()
    }
}
