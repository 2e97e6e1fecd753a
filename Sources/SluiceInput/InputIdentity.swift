import CSluiceZlib

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies a file input between an interrupted run and its resume:
/// its size, modification time and a CRC-32 of its first MiB.
package struct InputIdentity: Sendable, Equatable, CustomStringConvertible {
    /// Size in bytes.
    package var size: Int64
    /// Modification time, in nanoseconds since 1970.
    package var modified: Int64
    /// CRC-32 of the first MiB (the whole file when smaller).
    package var headChecksum: Int64

    /// Creates an identity from stored values.
    package init(size: Int64, modified: Int64, headChecksum: Int64) {
        self.size = size
        self.modified = modified
        self.headChecksum = headChecksum
    }

    /// The identity of the file at `path`, or `nil` for standard input and
    /// for anything that is not a regular file (a named pipe, `/dev/fd/N`
    /// from a shell's `<(...)`), which reading would consume: those resume
    /// as streams do. Reads up to 1 MiB of a regular file.
    package static func of(path: String) throws(InputError) -> InputIdentity? {
        guard !Input.isStream(path) else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { throw .notFound(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { head.deallocate() }
        var filled = 0
        while filled < head.count {
            let count = read(fd, head.baseAddress! + filled, head.count - filled)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            filled += count
        }
        let checksum = crc32(0, head.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(filled))
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        let modified = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        return InputIdentity(size: Int64(info.st_size), modified: modified, headChecksum: Int64(checksum))
    }

    /// The identity of a stream (standard input) by its first `bytes`
    /// bytes and their CRC-32: an interrupted run records it with each
    /// checkpoint, and a resume checks the new stream's prefix against it.
    package static func streamPrefix(bytes: Int64, checksum: Int64) -> InputIdentity {
        InputIdentity(size: bytes, modified: -1, headChecksum: checksum)
    }

    /// Whether this identifies a stream by a prefix rather than a file.
    package var isStreamPrefix: Bool { modified < 0 }

    /// `checksum` (a CRC-32 so far, 0 at the start) extended over `bytes`.
    /// O(bytes).
    package static func checksum(_ checksum: Int64, extendedWith bytes: UnsafeRawBufferPointer) -> Int64 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return checksum }
        return Int64(crc32(uLong(checksum), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    /// `size 123, modified 1700000000.000000000, crc 0x1234abcd`, or for a
    /// stream `first 123 bytes, crc 0x1234abcd`.
    package var description: String {
        if isStreamPrefix { return "first \(size) bytes, crc \(String(headChecksum, radix: 16))" }
        return
            "size \(size), modified \(modified / 1_000_000_000).\(modified % 1_000_000_000), crc \(String(headChecksum, radix: 16))"
    }
}
