#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens inputs, recognising compression by magic bytes rather than by name.
package enum Input {
    /// The default size of the chunks read from disk and fed to the parsers.
    package static let defaultChunkSize = 64 * 1024

    /// Opens `path` (`-` for standard input) and returns its decompressed
    /// bytes: plain input as it is, gzip, bzip2, zstd and xz decoded on the fly.
    ///
    /// Reads the first 6 bytes ahead to detect the format; nothing else is
    /// read until the caller reads.
    package static func open(path: String, chunkSize: Int = defaultChunkSize) throws(InputError) -> ByteSource {
        let file = try FileByteSource(path: path)
        let magic = try file.peek(Compression.magicLength)
        let compression = magic.withUnsafeBytes { Compression.detect($0) }
        let decoder: StreamDecoder
        switch compression {
        case .none: return file
        case .gzip: decoder = GzipDecoder()
        case .bzip2: decoder = Bzip2Decoder()
        case .zstd: decoder = ZstdDecoder()
        case .xz: decoder = XzDecoder()
        }
        return DecompressingSource(raw: file, compression: compression, decoder: decoder, chunkSize: chunkSize)
    }

    /// Whether `path` is read as a stream, which reading consumes: standard
    /// input (`-`), a named pipe, `/dev/fd/N` from a shell's `<(...)`;
    /// anything but a regular file. One `stat(2)`.
    package static func isStream(_ path: String) -> Bool { path == "-" || !isRegularFile(path) }

    /// Whether `path` names a regular file (not a pipe or a device), found
    /// without opening it: opening a named pipe would let its writer go on.
    package static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}
