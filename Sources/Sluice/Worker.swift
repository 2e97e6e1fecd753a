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
        started = pthread_create(&thread, nil, { argument in
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

/// A flag one thread sets and others read.
final class Flag: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value = false

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    var isSet: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return value
    }

    func set() {
        pthread_mutex_lock(&mutex)
        value = true
        pthread_mutex_unlock(&mutex)
    }
}
