#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The end of the runs a caller may cancel, and the threads of runs: what
/// makes a cancellation return only once its run has stopped, committed what
/// it will and let its store go (``ImportCancellation/cancel()``,
/// ``PushImport/cancel()``, leaving ``Importer/events(inputs:)-([String])``),
/// without a cancel asked for on a run's own thread (a progress callback, a
/// hook) waiting for itself. O(1) a call besides the waits.
final class RunEnd: @unchecked Sendable {
    // Checked by hand: `running` and `waiters` are read and written only
    // with `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var running = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// A run starts: waits last until it ends.
    func begin() {
        pthread_mutex_lock(&mutex)
        running += 1
        pthread_mutex_unlock(&mutex)
    }

    /// The run has stopped and released its store: wakes whoever waits.
    func end() {
        pthread_mutex_lock(&mutex)
        running -= 1
        var woken: [CheckedContinuation<Void, Never>] = []
        if running == 0 { swap(&woken, &waiters) }
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
        for waiter in woken { waiter.resume() }
    }

    /// Blocks until no run is going on; returns at once on a run's own
    /// thread (``isRunThread``), whose run cannot end while it waits.
    func wait() {
        guard !Self.isRunThread else { return }
        pthread_mutex_lock(&mutex)
        while running > 0 { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
    }

    /// Suspends the calling task until no run is going on.
    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pthread_mutex_lock(&mutex)
            if running == 0 {
                pthread_mutex_unlock(&mutex)
                continuation.resume()
            } else {
                waiters.append(continuation)
                pthread_mutex_unlock(&mutex)
            }
        }
    }

    /// Marks the threads that run an import's code and call the caller's
    /// (the parse thread, which runs hooks, and the store thread, which
    /// reports progress).
    private static let runThreadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether the calling thread is running an import.
    static var isRunThread: Bool { pthread_getspecific(runThreadKey) != nil }

    /// Runs `body` with the calling thread marked as a run's thread.
    static func onRunThread<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(runThreadKey)
        pthread_setspecific(runThreadKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(runThreadKey, previous) }
        return try body()
    }
}
