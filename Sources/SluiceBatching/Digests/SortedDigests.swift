import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``DigestSorter``'s entries in order, each with its bytes: those it
/// held, or its runs merged with one read buffer each. Closes the run file
/// when it goes.
package final class SortedDigests {
    private var held: [(entry: DigestEntry, start: Int, count: Int)] = []
    private var heldBytes: [UInt8] = []
    private var heldNext = 0
    private let file: Int32
    private let path: String
    private var cursors: [Cursor] = []
    /// Run indices ordered as a binary min-heap by their current entry.
    private var heap: [Int] = []
    private var started = false

    /// One run being merged: what is left of it in the file, the bytes read
    /// and not yet used, and its current entry.
    private struct Cursor {
        var range: Range<Int64>
        var buffer: [UInt8] = []
        var position = 0
        var current: DigestEntry?
        var bytes: [UInt8] = []
    }

    init(held: [(entry: DigestEntry, start: Int, count: Int)], heldBytes: [UInt8]) {
        self.held = held
        self.heldBytes = heldBytes
        file = -1
        path = ""
    }

    init(file: Int32, path: String, runs: [Range<Int64>]) {
        self.file = file
        self.path = path
        cursors = runs.map { Cursor(range: $0) }
    }

    deinit { if file >= 0 { close(file) } }

    /// The next entry and its bytes, nil after the last. O(log runs).
    package func next() throws(SpillError) -> (entry: DigestEntry, bytes: [UInt8])? {
        if file < 0 {
            guard heldNext < held.count else { return nil }
            let item = held[heldNext]
            heldNext += 1
            return (item.entry, Array(heldBytes[item.start..<item.start + item.count]))
        }
        if !started {
            started = true
            for run in cursors.indices {
                try advance(run)
                if cursors[run].current != nil { push(run) }
            }
        }
        guard let top = heap.first, let entry = cursors[top].current else { return nil }
        let bytes = cursors[top].bytes
        try advance(top)
        if cursors[top].current == nil {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
        }
        if !heap.isEmpty { siftDown(0) }
        return (entry, bytes)
    }

    /// Moves run `run` to its next entry.
    private func advance(_ run: Int) throws(SpillError) {
        // The fixed part and the longest varint, then the entry's bytes.
        guard try fill(run, 24 + 10) else {
            cursors[run].current = nil
            return
        }
        let start = cursors[run].position
        guard cursors[run].buffer.count - start >= 24 else {
            throw SpillError(path: path, action: "reading a digest run", message: "a run ends inside an entry")
        }
        var position = start + 24
        let (entry, length) = cursors[run].buffer.withUnsafeBytes { raw in
            let digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: raw[start..<start + 16]))
            let payload = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start + 16, as: UInt64.self))
            return (DigestEntry(digest: digest, payload: payload), RowCoding.readVarint(raw, &position) ?? 0)
        }
        cursors[run].position = position
        guard try fill(run, Int(length)) || length == 0 else {
            throw SpillError(path: path, action: "reading a digest run", message: "a run ends inside an entry")
        }
        let at = cursors[run].position
        cursors[run].bytes = Array(cursors[run].buffer[at..<at + Int(length)])
        cursors[run].position += Int(length)
        cursors[run].current = entry
    }

    /// Makes at least `wanted` bytes of run `run` ready at its position (or
    /// what is left, when less); false when none are.
    private func fill(_ run: Int, _ wanted: Int) throws(SpillError) -> Bool {
        var cursor = cursors[run]
        let ready = cursor.buffer.count - cursor.position
        let left = cursor.range.upperBound - cursor.range.lowerBound
        if ready < wanted && left > 0 {
            let count = Int(min(Int64(max(DigestSorter.readBytes, wanted)), left))
            var buffer = Array(cursor.buffer[cursor.position...])
            let old = buffer.count
            buffer += [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = buffer.withUnsafeMutableBytes {
                    pread(
                        file, $0.baseAddress! + old + done, count - done, off_t(cursor.range.lowerBound) + off_t(done))
                }
                guard got > 0 else { throw SpillError(path: path, action: "reading a digest run", errno: errno) }
                done += got
            }
            cursor.buffer = buffer
            cursor.position = 0
            cursor.range = cursor.range.lowerBound + Int64(count)..<cursor.range.upperBound
        }
        cursors[run] = cursor
        return cursor.buffer.count - cursor.position > 0
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
