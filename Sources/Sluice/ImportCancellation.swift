/// Asks a running import to stop, from any thread: a signal handler's
/// queue, a user interface, a watchdog. The import notices within one
/// batch (or one chunk of the delete-missing sweep) in every phase — reading,
/// sorting, the key-ordered apply, the sweep — rolls back the transaction it
/// has open, records the run as `cancelled` in the ledger and throws
/// ``ImportError/cancelled``. What was committed before stays, and
/// `--resume` continues from it: which batches that is depends on the apply
/// order (``ApplyOrder``; the getting-started article's "What a cancel
/// keeps").
public final class ImportCancellation: Sendable {
    let flag = Flag()
    /// The runs this cancellation stops, which ``cancel()`` waits for.
    let end = RunEnd()

    public init() {}

    /// Requests the stop and returns once every run given this cancellation
    /// has stopped, recorded itself and released its store (at once when no
    /// run is going on); later calls do nothing more. Called from a progress
    /// callback or a hook, which run on an import's own threads, it only
    /// requests the stop, which the run then makes.
    public func cancel() {
        flag.set()
        end.wait()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.isSet }
}
