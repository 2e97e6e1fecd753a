#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value one thread sets and others read, behind a mutex: what the
/// pipeline's threads exchange besides the queue of groups (its
/// cancellation flag, the go-ahead to apply sorted rows, the store's
/// failure: ``PipelineExchange``). O(1) a read or write.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var stored: Value

    init(_ value: Value) {
        stored = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// The value last set.
    var value: Value {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return stored
    }

    /// Replaces the value.
    func set(_ value: Value) {
        pthread_mutex_lock(&mutex)
        stored = value
        pthread_mutex_unlock(&mutex)
    }
}

/// A flag one thread sets and others read (a run's cancellation, the
/// go-ahead to apply sorted rows); a thread that waits for something else
/// (the next chunk of a pipe) asks to be woken when it is set. O(1) a read.
final class Flag: @unchecked Sendable {
    // Checked by hand: `raised` and `wakers` are read and written only with
    // `mutex` held.
    private var mutex = pthread_mutex_t()
    private var raised = false
    private var wakers: [@Sendable () -> Void] = []

    /// A flag not set.
    init() { pthread_mutex_init(&mutex, nil) }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Whether the flag was set.
    var isSet: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return raised
    }

    /// Sets the flag and runs the wake-ups asked for (once).
    func set() {
        pthread_mutex_lock(&mutex)
        let woken = raised ? [] : wakers
        raised = true
        wakers = []
        pthread_mutex_unlock(&mutex)
        for wake in woken { wake() }
    }

    /// Runs `wake` when the flag is set, at once if it is.
    func whenSet(_ wake: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(&mutex)
        if raised {
            pthread_mutex_unlock(&mutex)
            wake()
            return
        }
        wakers.append(wake)
        pthread_mutex_unlock(&mutex)
    }
}
