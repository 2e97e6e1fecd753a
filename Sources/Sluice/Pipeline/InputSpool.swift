import SluiceBatching
import SluiceInput

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream input of a run that skips (standard input, a named pipe: what
/// cannot be read twice), read once into an unlinked file in the sort
/// directory, so that the plan's hash pass, its probe and the parse each
/// read it from its start as they read a file (docs/record-digests.md,
/// "Standard input"). The spool holds the decompressed bytes: it costs their
/// size on disk (gone with the process, however it ends), one chunk of
/// memory, and a write and a read of each byte more than a file input. A
/// read error of the stream (a compressed stream cut short or damaged) ends
/// the spool where it came, and each ``Reader`` throws it again there, so
/// that the run meets it at the byte where a full run meets it.
final class InputSpool {
    /// The input's name in messages (`-` for standard input).
    let name: String
    /// The stream's compression, as its source read it.
    let compression: Compression
    private let descriptor: Int32
    /// Decompressed bytes spooled, and the stream's bytes read for them.
    private let size: Int64
    private let rawSize: Int64
    /// What ended the stream early, thrown again at its place.
    private let failure: InputError?

    /// Reads `source` to its end into a new file in `directory`, a chunk of
    /// `chunkSize` at a time, stopping when `cancellation` is set. O(input).
    init(_ source: ByteSource, directory: String, chunkSize: Int, cancellation: Flag) throws(ImportError) {
        name = source.name
        compression = source.compression
        let file = UnlinkedFile(in: directory, prefix: "sluice-input-")
        let (opened, path) = (file.descriptor, file.path)
        guard opened >= 0 else { throw .spill(SpillError(path: path, action: "spooling \(name)", errno: file.error)) }
        let copied: (bytes: Int64, failure: InputError?)
        do throws(ImportError) {
            copied = try Self.copy(source, to: opened, path: path, chunkSize: chunkSize, cancellation: cancellation)
        } catch {
            close(opened)
            throw error
        }
        descriptor = opened
        size = copied.bytes
        rawSize = source.consumedBytes
        failure = copied.failure
    }

    /// Writes `source`'s bytes to `descriptor` (the file at `path`) until
    /// its end or its first read error, which it returns. O(input).
    private static func copy(
        _ source: ByteSource, to descriptor: Int32, path: String, chunkSize: Int, cancellation: Flag
    ) throws(ImportError) -> (bytes: Int64, failure: InputError?) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var written: Int64 = 0
        while true {
            if cancellation.isSet { throw .cancelled }
            let count: Int
            do { count = try source.read(into: buffer) } catch { return (written, error) }
            if count == 0 { return (written, nil) }
            var done = 0
            while done < count {
                let wrote = write(descriptor, buffer.baseAddress! + done, count - done)
                if wrote < 0 && errno == EINTR { continue }
                guard wrote > 0 else {
                    throw .spill(SpillError(path: path, action: "spooling \(source.name)", errno: errno))
                }
                done += wrote
            }
            written += Int64(count)
        }
    }

    deinit { close(descriptor) }

    /// A new reader of the spooled bytes from their start.
    func reader() -> Reader { Reader(self) }

    /// The spooled bytes as a ``ByteSource`` of the stream's name and
    /// compression, read with `pread(2)`: readers do not share a position.
    /// Its consumed bytes are the stream's, in proportion to the spooled
    /// bytes read.
    final class Reader: ByteSource {
        private let spool: InputSpool
        private var offset: Int64 = 0

        init(_ spool: InputSpool) { self.spool = spool }

        var name: String { spool.name }
        var totalBytes: Int64? { nil }
        var compression: Compression { spool.compression }
        var consumedBytes: Int64 { spool.size == 0 ? spool.rawSize : spool.rawSize * offset / spool.size }

        /// One `pread(2)`; at the spool's end, the stream's error if it had one.
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
            guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
            if offset == spool.size {
                if let failure = spool.failure { throw failure }
                return 0
            }
            while true {
                let count = pread(spool.descriptor, base, min(buffer.count, Int(spool.size - offset)), off_t(offset))
                if count > 0 {
                    offset += Int64(count)
                    return count
                }
                if count < 0 && errno == EINTR { continue }
                let reason = count < 0 ? String(cString: strerror(errno)) : "the spooled input ended early"
                throw .unreadable(path: spool.name, reason: reason)
            }
        }
    }
}
