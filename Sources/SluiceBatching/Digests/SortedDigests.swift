#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``DigestSorter``'s entries in order: those it held, or its runs merged
/// with one read buffer each. Closes the run file when it goes.
package final class SortedDigests {
    private var held: [DigestEntry]
    private var heldNext = 0
    private let file: Int32
    private let path: String
    /// Per run: the bytes left to read, its buffer and the position in it.
    private var cursors: [Cursor]
    /// Run indices ordered as a binary min-heap by their current entry.
    private var heap: [Int] = []
    private var started = false

    private struct Cursor {
        var range: Range<Int64>
        var buffer: [UInt8] = []
        var position = 0
        var current: DigestEntry?
    }

    init(held: [DigestEntry], file: Int32, path: String, runs: [Range<Int64>]) {
        self.held = held
        self.file = file
        self.path = path
        cursors = runs.map { Cursor(range: $0) }
    }

    deinit { if file >= 0 { close(file) } }

    /// The next entry, nil after the last. O(log runs).
    package func next() throws(SpillError) -> DigestEntry? {
        if file < 0 {
            guard heldNext < held.count else { return nil }
            heldNext += 1
            return held[heldNext - 1]
        }
        if !started {
            started = true
            for run in cursors.indices {
                try advance(run)
                if cursors[run].current != nil { push(run) }
            }
        }
        guard let top = heap.first, let entry = cursors[top].current else { return nil }
        try advance(top)
        if cursors[top].current == nil {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
        }
        if !heap.isEmpty { siftDown(0) }
        return entry
    }

    /// Moves run `run` to its next entry, reading its next block when needed.
    private func advance(_ run: Int) throws(SpillError) {
        if cursors[run].position >= cursors[run].buffer.count {
            let range = cursors[run].range
            guard !range.isEmpty else {
                cursors[run].current = nil
                return
            }
            let wanted = Int(min(Int64(DigestSorter.readBytes), range.upperBound - range.lowerBound))
            var buffer = [UInt8](repeating: 0, count: wanted)
            var done = 0
            while done < wanted {
                let got = buffer.withUnsafeMutableBytes {
                    pread(file, $0.baseAddress! + done, wanted - done, off_t(range.lowerBound) + off_t(done))
                }
                guard got > 0 else { throw SpillError(path: path, action: "reading a digest run", errno: errno) }
                done += got
            }
            cursors[run].buffer = buffer
            cursors[run].position = 0
            cursors[run].range = range.lowerBound + Int64(wanted)..<range.upperBound
        }
        let position = cursors[run].position
        cursors[run].current = cursors[run].buffer.withUnsafeBytes { DigestEntry(at: position, of: $0) }
        cursors[run].position += DigestEntry.stride
    }

    private func less(_ left: Int, _ right: Int) -> Bool {
        guard let a = cursors[heap[left]].current, let b = cursors[heap[right]].current else { return false }
        return a < b
    }

    private func push(_ run: Int) {
        heap.append(run)
        var child = heap.count - 1
        while child > 0, less(child, (child - 1) / 2) {
            heap.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            if left < heap.count && less(left, smallest) { smallest = left }
            if right < heap.count && less(right, smallest) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
