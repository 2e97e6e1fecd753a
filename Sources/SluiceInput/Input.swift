/// Opens inputs, recognising compression by magic bytes rather than by name.
public enum Input {
    /// The default size of the chunks read from disk and fed to the parsers.
    public static let defaultChunkSize = 64 * 1024

    /// Opens `path` (`-` for standard input) and returns its decompressed
    /// bytes: plain input as it is, gzip, bzip2, zstd and xz decoded on the fly.
    ///
    /// Reads the first 6 bytes ahead to detect the format; nothing else is
    /// read until the caller reads.
    public static func open(path: String, chunkSize: Int = defaultChunkSize) throws(InputError) -> ByteSource {
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
}
