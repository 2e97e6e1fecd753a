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
    package init(_ body: @escaping () -> Void) {
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
