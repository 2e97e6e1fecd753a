#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plain bytes of a file or of standard input, read with `read(2)`.
package final class FileByteSource: ByteSource {
    package let name: String
    package private(set) var consumedBytes: Int64 = 0
    package let totalBytes: Int64?
    package var compression: Compression { .none }

    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Bytes read ahead (to sniff the format) and handed out again first.
    private var pending: [UInt8] = []
    private var pendingIndex = 0

    /// Opens `path` for reading; `-` means standard input.
    ///
    /// - Throws: ``InputError/notFound(path:)`` when the path does not exist,
    ///   ``InputError/unreadable(path:reason:)`` when it cannot be opened or is
    ///   a directory.
    package init(path: String) throws(InputError) {
        name = path
        if path == "-" {
            fd = STDIN_FILENO
            ownsDescriptor = false
        } else {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            if opened < 0 {
                let code = errno
                if code == ENOENT { throw .notFound(path: path) }
                throw .unreadable(path: path, reason: String(cString: strerror(code)))
            }
            fd = opened
            ownsDescriptor = true
        }
        var info = stat()
        if fstat(fd, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                if ownsDescriptor { close(fd) }
                throw .unreadable(path: path, reason: "it is a directory")
            }
            totalBytes = (info.st_mode & S_IFMT) == S_IFREG ? Int64(info.st_size) : nil
        } else {
            totalBytes = nil
        }
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Reads up to `count` bytes ahead and keeps them to be returned again by
    /// the next reads; returns what it read (fewer only at end of input).
    package func peek(_ count: Int) throws(InputError) -> [UInt8] {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { scratch.deallocate() }
        var filled = 0
        while filled < count {
            let got = try read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[filled...]))
            if got == 0 { break }
            filled += got
        }
        pending = Array(scratch[..<filled])
        pendingIndex = 0
        return pending
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if pendingIndex < pending.count {
            let count = min(buffer.count, pending.count - pendingIndex)
            pending.withUnsafeBytes { raw in
                base.copyMemory(from: raw.baseAddress! + pendingIndex, byteCount: count)
            }
            pendingIndex += count
            if pendingIndex == pending.count {
                pending = []
                pendingIndex = 0
            }
            return count
        }
        while true {
            let count = systemRead(fd, base, buffer.count)
            if count >= 0 {
                consumedBytes += Int64(count)
                return count
            }
            if errno == EINTR { continue }
            throw .unreadable(path: name, reason: String(cString: strerror(errno)))
        }
    }
}

/// `read(2)`, by a name the class's own `read` does not shadow.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
