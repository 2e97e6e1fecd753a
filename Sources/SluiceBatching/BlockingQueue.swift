#if canImport(Glibc)
import Glibc
#endif

/// A FIFO of bounded length between two threads: `push` blocks while it is
/// full (back-pressure), `pop` blocks while it is empty. Either side can
/// close it: after ``close()`` pops drain what is left, then return `nil`;
/// after ``fail()`` pushes return `false` at once.
public final class BlockingQueue<Element>: @unchecked Sendable {
    private var items: [Element] = []
    private let capacity: Int
    private var closed = false
    private var failed = false
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()

    /// A queue holding at most `capacity` elements (at least 1).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    /// Adds `item`, waiting for room; returns `false` (dropping it) when the
    /// consumer failed.
    public func push(_ item: Element) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.count >= capacity && !failed { pthread_cond_wait(&changed, &mutex) }
        if failed { return false }
        items.append(item)
        pthread_cond_broadcast(&changed)
        return true
    }

    /// Takes the oldest element, waiting for one; `nil` once closed and empty.
    public func pop() -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.isEmpty && !closed { pthread_cond_wait(&changed, &mutex) }
        if items.isEmpty { return nil }
        let item = items.removeFirst()
        pthread_cond_broadcast(&changed)
        return item
    }

    /// No more pushes will come.
    public func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&changed)
        pthread_mutex_unlock(&mutex)
    }

    /// The consumer gave up: drop what is queued and refuse further pushes.
    public func fail() {
        pthread_mutex_lock(&mutex)
        failed = true
        closed = true
        items.removeAll()
        pthread_cond_broadcast(&changed)
        pthread_mutex_unlock(&mutex)
    }
}
