#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread running one closure, joined when its result is needed.
final class Worker: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void
    private var started = false

    /// Starts `body` on a new thread.
    init(_ body: @escaping () -> Void) {
        self.body = body
        let box = Unmanaged.passRetained(self).toOpaque()
        started =
            pthread_create(
                &thread, nil,
                { argument in
                    let worker = Unmanaged<Worker>.fromOpaque(argument!).takeRetainedValue()
                    worker.body()
                    return nil
                }, box) == 0
        if !started {
            Unmanaged<Worker>.fromOpaque(box).release()
            body()
        }
    }

    /// Lets the thread end on its own; it will not be joined.
    func detach() {
        if started { pthread_detach(thread) }
        started = false
    }

    /// Waits for the closure to return.
    func join() {
        if started { pthread_join(thread, nil) }
        started = false
    }
}

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
