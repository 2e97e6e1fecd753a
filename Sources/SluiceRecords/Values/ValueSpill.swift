import SluiceInput

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value the side file could not give back while a record was mapped.
package struct ValueSpillError: Error, CustomStringConvertible {
    /// The side file's name.
    package var path: String
    /// The system's reason.
    package var message: String

    package var description: String { "\(path): reading a large value back: \(message)" }
}

/// A run's side file of large values: a value longer than ``threshold`` is
/// written here once, when its record is mapped, and travels through the
/// row arenas, the queued groups, the sort's runs and the merged batches as
/// a spilled cell (``Cell/spilledText(descriptor:length:)``) that holds its
/// place in this file instead of its bytes; the store reads it back when it
/// binds the row. The file is unlinked as soon as it is created (like the
/// sort's run files), so it goes with the process whatever happens.
///
/// The parse threads append (a run that parses on several shares one file,
/// so that every arena and run file names a single one): each append takes
/// its place at the end under a lock, then writes it there; any thread
/// reads (`pread` at offsets it was handed through the pipeline's queues,
/// which order the write before the read). Checked `@unchecked Sendable`:
/// what changes is changed under the lock.
@_spi(Machinery) public final class ValueSpill: @unchecked Sendable {
    /// Values longer than this many bytes are spilled. Below it a value is
    /// carried in the arenas as before: 256 KiB keeps a batch of 8 MiB
    /// (``BatchLimits``) at thirty-odd such values and the sort's 6 MiB
    /// budget at a few dozen, while a 5 MiB field, which each stage used to
    /// copy (24 records of three: 176 MB peak), crosses every stage as 8
    /// bytes of its arena.
    @_spi(Machinery) public static let threshold = 256 << 10
    /// Bytes read or written at a time when a value is streamed.
    @_spi(Machinery) public static let chunkBytes = 64 << 10

    /// The file's name when created (for messages; it is already unlinked),
    /// or the directory it goes in until the first value.
    @_spi(Machinery) public private(set) var path: String
    /// The file, opened with the first value; -1 before.
    private var descriptor: Int32 = -1
    /// Where the next value goes (the parse thread's only).
    private var end: Int64 = 0
    /// Set when the file could not be created or written: values are no
    /// longer spilled, they stay in the arenas as without a side file (a
    /// full disk costs memory, not the run; the sort's runs report it).
    private var failed = false
    /// Why a value a parse thread read back (``readBack(from:into:)``)
    /// could not be read; the assembler fails the record with it.
    package var readFailure: String? { locked { failedRead } }
    private var failedRead: String?
    /// Guards `descriptor`'s opening, `end`, `failed` and `failedRead`.
    private var mutex = pthread_mutex_t()

    /// A side file in `directory`, created with the first value spilled
    /// (most runs have none). O(1).
    @_spi(Machinery) public init(directory: String) {
        path = directory
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        pthread_mutex_destroy(&mutex)
    }

    /// Bytes written so far.
    @_spi(Machinery) public var size: Int64 { locked { end } }

    /// Writes `bytes` at the end of the file and returns where they start;
    /// nil when the write failed (and from then on). O(bytes), one `pwrite`
    /// and the lock taken twice at most.
    @_spi(Machinery) public func append(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        let place: Int64? = locked {
            guard !failed, descriptor >= 0 || open() else { return nil }
            defer { end += Int64(bytes.count) }
            return end
        }
        guard let start = place else { return nil }
        var done = 0
        while done < bytes.count {
            let wrote = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(start) + off_t(done))
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else {
                locked { failed = true }
                return nil
            }
            done += wrote
        }
        return start
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// Creates the file, unlinked at once; false (and no more spilling)
    /// when it cannot be. O(1).
    private func open() -> Bool {
        let file = UnlinkedFile(in: path, prefix: "sluice-values-")
        descriptor = file.descriptor
        guard descriptor >= 0 else {
            failed = true
            return false
        }
        path = file.path
        return true
    }

    /// Reads `buffer.count` bytes from `offset` into `buffer`; the system's
    /// reason when it cannot. O(bytes).
    @_spi(Machinery) public func read(from offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> String? {
        var done = 0
        while done < buffer.count {
            let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if got < 0 && errno == EINTR { continue }
            if got < 0 { return String(cString: strerror(errno)) }
            if got == 0 { return "the file ends before the value does" }
            done += got
        }
        return nil
    }

    /// ``read(from:into:)`` for the parse thread, which keeps the reason of
    /// a failure in ``readFailure`` for the assembler to report after the
    /// record (a tree's readers cannot throw). O(bytes).
    package func readBack(from offset: Int64, into buffer: UnsafeMutableRawBufferPointer) {
        guard let failure = read(from: offset, into: buffer) else { return }
        locked { if failedRead == nil { failedRead = failure } }
    }

    /// Writes a copy of the `length` bytes at `offset` at the end of the
    /// file (an element's text that resumes after another value was spilled)
    /// and returns where it starts; nil when it cannot. O(length).
    package func appendCopy(from offset: Int64, length: Int) -> Int64? {
        let start = size
        var copied = true
        let failure = forEachChunk(from: offset, length: length) { piece in
            copied = append(piece) != nil
            return copied
        }
        return failure == nil && copied ? start : nil
    }

    /// Calls `body` with each piece of the value of `length` bytes at
    /// `offset`, in order, through one buffer of ``chunkBytes``, until
    /// `body` returns false: a consumer that streams (a comparison,
    /// PostgreSQL's COPY) never holds the value whole. The system's reason
    /// when a read fails. O(length).
    @_spi(Machinery) public func forEachChunk(
        from offset: Int64, length: Int, _ body: (UnsafeRawBufferPointer) -> Bool
    ) -> String? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(length, Self.chunkBytes), alignment: 8)
        defer { buffer.deallocate() }
        var done = 0
        while done < length {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, length - done)])
            if let failure = read(from: offset + Int64(done), into: piece) { return failure }
            guard body(UnsafeRawBufferPointer(piece)) else { return nil }
            done += piece.count
        }
        return nil
    }
}
