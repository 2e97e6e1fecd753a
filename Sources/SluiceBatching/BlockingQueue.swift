#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A FIFO bounded in length and in weight (bytes, say) between two threads:
/// `push` blocks while it is full (back-pressure), `pop` blocks while it is
/// empty. Either side can close it: after ``close()`` pops drain what is
/// left, then return `nil`; after ``fail()`` pushes return `false` at once.
package final class BlockingQueue<Element>: @unchecked Sendable {
    private var items: [(element: Element, weight: Int)] = []
    private let capacity: Int
    private let weightLimit: Int
    private let weigh: (Element) -> Int
    private var weight = 0
    private var closed = false
    private var failed = false
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()

    /// A queue holding at most `capacity` elements (at least 1) and, once it
    /// holds one, at most `weightLimit` of their weights together, each
    /// weighed once by `weigh` as it is pushed.
    package init(capacity: Int, weightLimit: Int = .max, weigh: @escaping (Element) -> Int = { _ in 0 }) {
        self.capacity = max(1, capacity)
        self.weightLimit = weightLimit
        self.weigh = weigh
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    /// Adds `item`, waiting for room (an empty queue always has room);
    /// returns `false` (dropping it) when the consumer failed.
    package func push(_ item: Element) -> Bool {
        let itemWeight = weigh(item)
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while !items.isEmpty && (items.count >= capacity || weight + itemWeight > weightLimit) && !failed {
            pthread_cond_wait(&changed, &mutex)
        }
        if failed { return false }
        items.append((item, itemWeight))
        weight += itemWeight
        pthread_cond_broadcast(&changed)
        return true
    }

    /// Takes the oldest element, waiting for one; `nil` once closed and empty.
    package func pop() -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.isEmpty && !closed { pthread_cond_wait(&changed, &mutex) }
        if items.isEmpty { return nil }
        let item = items.removeFirst()
        weight -= item.weight
        pthread_cond_broadcast(&changed)
        return item.element
    }

    /// No more pushes will come.
    package func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&changed)
        pthread_mutex_unlock(&mutex)
    }

    /// The consumer gave up: drop what is queued and refuse further pushes.
    package func fail() {
        pthread_mutex_lock(&mutex)
        failed = true
        closed = true
        items.removeAll()
        weight = 0
        pthread_cond_broadcast(&changed)
        pthread_mutex_unlock(&mutex)
    }
}
