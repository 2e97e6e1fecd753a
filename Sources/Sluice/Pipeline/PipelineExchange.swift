/// What the parse side and the store side of a run exchange, and all they
/// share: the queue of groups (parse side to store side), the cancellation
/// flag (the caller to both), whether the sorted rows may be applied (the
/// orchestrator to the store side) and the store side's failure (to the
/// parse side, which stops, and to the orchestrator). Checked `Sendable`:
/// each part is.
struct PipelineExchange: Sendable {
    /// Cut groups, bounded in count and bytes (``BatchLimits/queueDepth``,
    /// ``BatchLimits/maxBytes``): a full queue blocks the parse side.
    let groups: BlockingQueue<BatchGroup>
    /// Set by the caller's cancellation or by ``ImportPipeline/cancel()``;
    /// every phase checks it between batches.
    let cancelled: Flag
    /// Set by ``ImportPipeline/finish()`` and ``ImportPipeline/drain()``: the
    /// sorted rows may be applied. A run dropped without either applies
    /// nothing.
    let applySorted = Flag()
    /// Why the store side stopped; set before it fails ``groups``, so a push
    /// that the queue refuses finds it.
    let failure = Shared<ImportError?>(nil)
    /// The arenas of the group the store side is done with, for the
    /// batchers of the parse side and the workers (``Batcher/spares``): at
    /// most one a table, each of at most twice ``BatchLimits/maxBytes`` (a
    /// group of a few huge rows is let go). Sixteen held 7.5 to 8.6 MiB more at
    /// the peak of a 200,000-event import on one thread.
    let spares: ArenaPool

    /// An exchange whose queue holds `limits.queueDepth` groups and
    /// `limits.maxBytes` of rows, cancelled by `cancelled`, whose spares keep
    /// an arena for each of `tables`.
    init(limits: BatchLimits, tables: Int, cancelled: Flag) {
        groups = BlockingQueue(capacity: limits.queueDepth, weightLimit: limits.maxBytes) { $0.byteSize }
        self.cancelled = cancelled
        spares = ArenaPool(capacity: tables, maxBytes: 2 * limits.maxBytes)
    }

    /// The store side's failure, once the queue refused a group or the
    /// store side ended; a cancellation when the store side stopped for one
    /// (a commit it refused as interrupted once cancelled, or no failure).
    /// The parse side, blocked on a full queue, and the orchestrator read
    /// it alike: the parse side threw the interrupted commit's store error
    /// where the orchestrator said cancelled.
    var storeFailure: ImportError {
        if let failure = failure.value {
            if case .store(let error) = failure, error.cause == .interrupted && cancelled.isSet { return .cancelled }
            return failure
        }
        if cancelled.isSet { return .cancelled }
        return .store(StoreError(path: "", action: "applying a batch", message: "the store stopped", code: 0))
    }
}
