#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread running one closure, joined when its result is needed.
package final class Worker: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void
    private var started = false

    /// Starts `body` on a new thread.
    ///
    /// - Throws: ``ThreadRefused`` when the system gives no thread (a
    ///   process or user thread limit, no memory for a stack); `body` has
    ///   not run. Each caller decides what it does without one, since
    ///   running a loop that waits on another thread in its place would
    ///   never return.
    package init(_ body: @escaping () -> Void) throws(ThreadRefused) {
        self.body = body
        let box = Unmanaged.passRetained(self).toOpaque()
        let code = pthread_create(
            &thread, nil,
            { argument in
                let worker = Unmanaged<Worker>.fromOpaque(argument!).takeRetainedValue()
                worker.body()
                return nil
            }, box)
        guard code == 0 else {
            Unmanaged<Worker>.fromOpaque(box).release()
            throw ThreadRefused(code: code)
        }
        started = true
    }

    /// Lets the thread end on its own; it will not be joined.
    package func detach() {
        if started { pthread_detach(thread) }
        started = false
    }

    /// Waits for the closure to return.
    package func join() {
        if started { pthread_join(thread, nil) }
        started = false
    }
}

/// The system refused a new thread (`pthread_create`'s error).
package struct ThreadRefused: Error, CustomStringConvertible {
    /// The error number `pthread_create` returned (`EAGAIN` at a thread
    /// limit).
    package var code: Int32

    package var description: String { "no thread could be started: \(String(cString: strerror(code)))" }
}
