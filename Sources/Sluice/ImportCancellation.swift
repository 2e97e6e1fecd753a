/// Asks a running import to stop, from any thread: a signal handler's
/// queue, a user interface, a watchdog. The import notices within one
/// batch (or one chunk of the delete-missing sweep) in every phase — reading,
/// sorting, the key-ordered apply, the sweep — rolls back the transaction it
/// has open, records the run as `cancelled` in the ledger and throws
/// ``ImportError/cancelled``. What was committed before stays, and
/// `--resume` continues from it.
public final class ImportCancellation: Sendable {
    let flag = Flag()

    public init() {}

    /// Requests the stop; later calls do nothing more.
    public func cancel() { flag.set() }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.isSet }
}
