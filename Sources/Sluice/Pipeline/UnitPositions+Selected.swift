import SluiceInput

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The selected units of an input read from their places in its file, in
/// order, by `pread(2)`: what the probe and the parse of a run that skips
/// read instead of the whole input (docs/record-digests.md, "A run that
/// skips"). Units whose bytes lie close together (gaps of at most
/// ``gapBytes``, within one chunk) are read by one call; a unit longer
/// than a chunk is read a chunk at a time, so memory stays one chunk.
extension UnitPositions {
    /// The most bytes between two selected units that one read spans rather
    /// than making two: a system call costs about what copying them does.
    static let gapBytes = 8 << 10

    /// Reads the units of input `index` that `selection` selects from the
    /// file at `path`, `chunkSize` bytes at most a read, and hands `body`
    /// each one's ordinal, its place (XML: its column in characters), and
    /// its bytes in pieces, with whether the piece is its first and its last.
    /// Cost: the selected units' bytes, the gaps between close ones, and one
    /// read of the input's places.
    func forEachSelected(
        input index: Int, path: String, selection: UnitSelection, chunkSize: Int,
        _ body: (Int, Place, UnsafeRawBufferPointer, Bool, Bool) throws(ImportError) -> Void
    ) throws(ImportError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .input(.unreadable(path: path, reason: String(cString: strerror(errno))))
        }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 16)
        defer { buffer.deallocate() }
        var batch: [(ordinal: Int, place: Place)] = []

        // Reads `batch`'s span at once, or its one long unit a chunk at a time.
        func flush() throws(ImportError) {
            guard let first = batch.first, let last = batch.last else { return }
            defer { batch.removeAll(keepingCapacity: true) }
            var offset = first.place.start
            while offset < last.place.end {
                let count = Int(min(Int64(buffer.count), last.place.end - offset))
                try Self.read(
                    descriptor, path: path, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset)
                for (ordinal, place) in batch where place.end > offset && place.start < offset + Int64(count) {
                    let from = Int(max(place.start, offset) - offset)
                    let to = Int(min(place.end, offset + Int64(count)) - offset)
                    try body(
                        ordinal, place, UnsafeRawBufferPointer(rebasing: buffer[from..<to]), place.start >= offset,
                        place.end <= offset + Int64(count))
                }
                offset += Int64(count)
            }
        }

        let characters = holdsContext(of: index)
        try forEach(input: index) { (ordinal, place) throws(ImportError) in
            guard selection.contains(input: index, ordinal: ordinal) else { return }
            let place = characters ? try Self.counted(place, descriptor: descriptor, path: path) : place
            if let first = batch.first, let last = batch.last,
                place.start - last.place.end > Self.gapBytes || place.end - first.place.start > Int64(buffer.count)
            {
                try flush()
            }
            batch.append((ordinal, place))
        }
        try flush()
    }

    /// Fills `buffer` from `descriptor` at `offset`; a file that ends before
    /// is one that changed since the hash pass read it.
    static func read(
        _ descriptor: Int32, path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(ImportError) {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason =
                    count < 0
                    ? String(cString: strerror(errno)) : "the file is shorter than when the run first read it"
                throw .input(.unreadable(path: path, reason: reason))
            }
            done += count
        }
    }
}
