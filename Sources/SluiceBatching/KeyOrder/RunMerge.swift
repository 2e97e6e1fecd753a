@_spi(Machinery) import SluiceRecords

/// A k-way merge of sorted runs: yields their rows in (key, ordinal) order.
/// The ordinal breaks ties, so the last occurrence of a key comes last
/// whichever run holds it, and any subset of a table's runs may be merged.
/// O(log k) per row; each run holds one decompressed block
/// (``RunCodec/blockBytes``) and a read buffer for compressed bytes: what
/// is left of `bufferBytes` shared out, 8–64 KiB.
///
/// The heap is written out here because its order lives in the readers,
/// which change under it: a reader's next row replaces its current one.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
final class RunMerge {
    private let readers: [RunReader]
    private let keys: [Int]
    /// Indices into `readers`, a binary min-heap by each reader's current row.
    @exclusivity(unchecked) private var heap: [Int] = []
    /// Each reader's current ordinal and, when the key is one integer cell,
    /// that integer: most keys compare without touching the rows.
    @exclusivity(unchecked) private var ordinals: [Int]
    @exclusivity(unchecked) private var integerKeys: [Int64]
    @exclusivity(unchecked) private var hasIntegerKey: [Bool]

    /// Opens `runs` of `file`, decoding rows of `columnCount` cells, with
    /// read buffers of `bufferBytes` in all, decompressing with `codec`.
    init(file: RunFile, runs: [Int], keys: [Int], columnCount: Int, bufferBytes: Int, codec: RunCodec)
        throws(SpillError)
    {
        // Each reader holds a decompressed block plus its compressed bytes.
        let each = min(64 << 10, max(RunCodec.blockBytes / 2, bufferBytes / max(1, runs.count) - RunCodec.blockBytes))
        readers = runs.map { file.reader($0, columnCount: columnCount, bufferBytes: each, codec: codec) }
        self.keys = keys
        ordinals = Array(repeating: 0, count: runs.count)
        integerKeys = Array(repeating: 0, count: runs.count)
        hasIntegerKey = Array(repeating: false, count: runs.count)
        for index in readers.indices where try readers[index].next() {
            noteCurrent(index)
            push(index)
        }
    }

    private func noteCurrent(_ index: Int) {
        // The reader's row read in place: a copy of the arena costs a
        // retain and a release of each of its buffers.
        let reader = readers[index]
        ordinals[index] = reader.current.ordinals[0]
        if keys.count == 1, case .integer(let value) = reader.current[0, keys[0]] {
            integerKeys[index] = value
            hasIntegerKey[index] = true
        } else {
            hasIntegerKey[index] = false
        }
    }

    /// The reader whose current row (row 0 of its arena) is the smallest,
    /// or nil when every run is exhausted; its row is read in place.
    var head: RunReader? { heap.first.map { readers[$0] } }

    /// Moves past the head row. O(log k).
    func advance() throws(SpillError) {
        guard let top = heap.first else { return }
        if try readers[top].next() {
            noteCurrent(top)
            siftDown(0)
        } else {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
            if !heap.isEmpty { siftDown(0) }
        }
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        if hasIntegerKey[a] && hasIntegerKey[b] {
            if integerKeys[a] != integerKeys[b] { return integerKeys[a] < integerKeys[b] }
        } else {
            let order = readers[a].current.compare(row: 0, keys, with: 0, of: readers[b].current)
            if order != 0 { return order < 0 }
        }
        return ordinals[a] < ordinals[b]
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
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && less(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
