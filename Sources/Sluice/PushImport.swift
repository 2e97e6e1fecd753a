#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An import fed by the caller, chunk by chunk; from ``Importer/startPush(name:format:progress:)``.
///
/// ``push(_:)-(UnsafeRawBufferPointer)`` parses on the calling thread and
/// blocks while the store catches up (at most `BatchLimits.queueDepth`
/// groups and `BatchLimits.maxBytes` wait), so memory stays bounded. It is
/// `Sendable`: calls from several threads or tasks take turns (one at a
/// time, each whole), and ``cancel()`` may come from anywhere.
public final class PushImport: @unchecked Sendable {
    // Checked by hand: `pipeline`, `ended` and `pushed` are read and written
    // only by the caller holding the turn (`turn`).
    /// The run, until it ends; let go then, which releases the store.
    private var pipeline: ImportPipeline?
    /// What a call after the end throws: the error that ended the run, or
    /// that the import finished.
    private var ended: ImportError = .usage("the push import has finished: push and finish come before finish")
    private var pushed: Int64 = 0
    private let turn = Turn()
    /// The run's cancellation flag, which ``cancel()`` sets without a turn.
    private let cancelled: Flag

    init(pipeline: ImportPipeline) {
        self.pipeline = pipeline
        cancelled = pipeline.exchange.cancelled
    }

    /// Parses the next bytes of the input. O(bytes).
    ///
    /// - Throws: ``ImportError`` for malformed input or a store failure
    ///   (the run is then over: what was committed stays, the ledger
    ///   records it), ``ImportError/cancelled`` after ``cancel()``; once
    ///   the import has ended, the error that ended it
    ///   (``ImportError/usage(_:)`` after ``finish()``).
    public func push(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        try turn.take { () throws(ImportError) in
            guard let pipeline else { throw ended }
            do throws(ImportError) {
                pushed += Int64(bytes.count)
                let raw = pushed
                try RunEnd.onRunThread { () throws(ImportError) in try pipeline.feed(bytes, raw: raw) }
            } catch {
                end(pipeline, failure: error)
                throw error
            }
        }
    }

    /// Parses the next bytes of the input.
    public func push(_ bytes: [UInt8]) throws(ImportError) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(ImportError) in try push(raw) } }
        try result.get()
    }

    /// Ends the input: it must be complete. Waits for every batch to commit
    /// and returns the counts; the store is released.
    public func finish() throws(ImportError) -> ImportReport {
        try turn.take { () throws(ImportError) in
            guard let pipeline else { throw ended }
            self.pipeline = nil
            return try RunEnd.onRunThread { () throws(ImportError) in
                do throws(ImportError) {
                    try pipeline.endInput()
                } catch {
                    pipeline.drain()
                    pipeline.record(failure: error)
                    throw error
                }
                return try pipeline.finish()
            }
        }
    }

    /// Ends an import whose input failed outside sluice (the caller's
    /// source threw `error`): what was committed stays, the ledger records
    /// the run as failed (cancelled for ``ImportError/cancelled``) and the
    /// store is released. Does nothing once the import has ended.
    public func abandon(_ error: ImportError) {
        turn.take { if let pipeline { end(pipeline, failure: error) } }
    }

    /// Stops the import: the batch being written rolls back; committed
    /// batches stay. Safe to call from any thread; returns once the run has
    /// stopped, recorded itself as cancelled and released the store (a push
    /// in progress on another thread throws ``ImportError/cancelled``). From
    /// a progress callback or a hook, which run on the import's own threads,
    /// it only asks for the stop, which the push under way then makes.
    public func cancel() {
        cancelled.set()
        guard !RunEnd.isRunThread else { return }
        abandon(.cancelled)
    }

    /// Ends the run by `failure`: commits what was parsed before it (a
    /// cancellation drops it), records it, and lets the store go.
    private func end(_ pipeline: ImportPipeline, failure: ImportError) {
        RunEnd.onRunThread {
            if case .cancelled = failure {
                pipeline.cancel()
            } else {
                // A parse error there is the run's first, but the source's failure is the one thrown.
                try? pipeline.parseSide.handOverRead()
            }
            pipeline.drain()
            pipeline.record(failure: failure)
        }
        self.pipeline = nil
        ended = failure
    }
}

/// Whose turn it is with a ``PushImport``: one caller at a time runs a
/// call whole, the others wait.
private final class Turn: @unchecked Sendable {
    // Checked by hand: `busy` is read and written only with `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var busy = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Waits for the turn, runs `body` and gives the turn up.
    func take<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(&mutex)
        while busy { pthread_cond_wait(&condition, &mutex) }
        busy = true
        pthread_mutex_unlock(&mutex)
        defer {
            pthread_mutex_lock(&mutex)
            busy = false
            pthread_cond_signal(&condition)
            pthread_mutex_unlock(&mutex)
        }
        return try body()
    }
}
