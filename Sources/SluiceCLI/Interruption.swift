import Dispatch
import Sluice

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns SIGINT and SIGTERM into a cancellation of the running import
/// instead of an abrupt death: the signals are blocked, handled by a
/// handler that does nothing, and read on a dispatch queue, where the
/// handler may do anything.
final class Interruption: @unchecked Sendable {
    let cancellation = ImportCancellation()
    private var sources: [DispatchSourceSignal] = []
    private let received = FirstSignal()

    /// Starts watching; the watch ends when the value goes away. Call it
    /// before the process starts other threads.
    init() {
        // Blocked first: the dispatch sources are registered later, on
        // dispatch's own thread, and a signal arriving in between was
        // discarded by SIG_IGN (a SIGTERM 0.2 s after start, on a loaded
        // machine, let the run complete). A blocked signal is never
        // discarded: it stays pending until the source reads it. Threads
        // started from here on inherit the mask.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        for number in [SIGINT, SIGTERM] {
            // A handler that does nothing, not SIG_IGN: setting SIG_IGN
            // discards a signal already pending, and one that came after
            // the mask above and before this line was lost, and the run
            // completed (release build, 200,000 events: 2 of 430 runs sent
            // SIGINT or SIGTERM 18 to 34 ms after their start, none of 370
            // with this handler). The dispatch source reads the signal
            // whatever its action.
            signal(number) { _ in }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [cancellation, received] in
                received.record(number)
                cancellation.cancel()
            }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
    }

    /// The first signal received, if any.
    var receivedSignal: Int32? { received.number }

    /// The conventional exit code for a process stopped by `signal`: 128 + its number.
    static func exitCode(for signal: Int32) -> Int32 { 128 + signal }

    /// The signal's name, for the message.
    static func name(of signal: Int32) -> String { signal == SIGTERM ? "SIGTERM" : "SIGINT" }
}

/// The first signal number recorded, shared between the signal queue and
/// the main thread.
final class FirstSignal: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value: Int32?

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func record(_ signal: Int32) {
        pthread_mutex_lock(&mutex)
        if value == nil { value = signal }
        pthread_mutex_unlock(&mutex)
    }

    var number: Int32? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return value
    }
}
