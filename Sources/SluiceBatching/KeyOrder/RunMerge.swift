import SluiceRecords

/// A k-way merge of sorted runs: yields their rows in (key, ordinal) order.
/// The ordinal breaks ties, so the last occurrence of a key comes last
/// whichever run holds it. O(log k) per row; one 64 KiB buffer per run.
///
/// The heap is written out here because its order lives in the readers,
/// which change under it: a reader's next row replaces its current one.
final class RunMerge {
    private let readers: [RunReader]
    private let keys: [Int]
    /// Indices into `readers`, a binary min-heap by each reader's current row.
    private var heap: [Int] = []

    /// Opens `runs` of `file`, decoding rows of `columnCount` cells.
    init(file: RunFile, runs: Range<Int>, keys: [Int], columnCount: Int) throws(SpillError) {
        readers = runs.map { file.reader($0, columnCount: columnCount) }
        self.keys = keys
        for index in readers.indices where try readers[index].next() { push(index) }
    }

    /// The smallest current row (row 0 of the arena), or nil when every run
    /// is exhausted.
    var head: RowArena? { heap.first.map { readers[$0].current } }

    /// Moves past the head row. O(log k).
    func advance() throws(SpillError) {
        guard let top = heap.first else { return }
        if try readers[top].next() {
            siftDown(0)
        } else {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
            if !heap.isEmpty { siftDown(0) }
        }
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        let left = readers[a].current, right = readers[b].current
        let order = left.compare(row: 0, keys, with: 0, of: right)
        if order != 0 { return order < 0 }
        return left.ordinals[0] < right.ordinals[0]
    }

    private func push(_ reader: Int) {
        heap.append(reader)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && less(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
