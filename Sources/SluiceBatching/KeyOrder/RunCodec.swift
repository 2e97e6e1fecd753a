import CSluiceZstd

/// Compresses run files in independent blocks of about ``blockBytes`` of
/// encoded rows, each one zstd frame (``level``) behind a header
/// `varint(raw length) varint(compressed length)`. Blocks end on row
/// boundaries, so a reader decompresses one block at a time into a small
/// buffer, whatever the number of runs it merges.
///
/// On the generated events workload 16 KiB blocks shrink about 2.3× (2.6×
/// at level 1); a 1 GB import (2,000,000 events) wrote 2,590 MB in all
/// uncompressed and 2,078 MB at level 1, in the same time. One codec serves
/// one thread at a time; its two zstd contexts are reused for every block.
final class RunCodec {
    /// Encoded rows gathered before a block is compressed.
    static let blockBytes = 16 << 10
    /// zstd's level: −3, a fast level, whose literals are not entropy-coded.
    /// Against level 1, 20,000 events into a new SQLite store (callgrind):
    /// compression on the store thread 245 M instructions against 294 M,
    /// decompression on the merge thread 97 M against 116 M, for run files of
    /// 3.40 MB against 2.99 MB; the 1 GB import had written 2,170 MB in all
    /// against 2,120 MB (docs/performance.md).
    static let level: Int32 = -3

    private let compressor: OpaquePointer
    private let decompressor: OpaquePointer
    private var frame: [UInt8] = []

    /// Creates the zstd contexts; nil when zstd cannot allocate them.
    init?() {
        guard let compressor = ZSTD_createCCtx() else { return nil }
        guard let decompressor = ZSTD_createDCtx() else {
            ZSTD_freeCCtx(compressor)
            return nil
        }
        self.compressor = compressor
        self.decompressor = decompressor
    }

    deinit {
        ZSTD_freeCCtx(compressor)
        ZSTD_freeDCtx(decompressor)
    }

    /// Appends `raw` as one block (header and frame) to `out`; returns the
    /// zstd error text on failure. O(raw).
    func compress(_ raw: [UInt8], into out: inout [UInt8]) -> String? {
        let bound = ZSTD_compressBound(raw.count)
        if frame.count < bound { frame = [UInt8](repeating: 0, count: bound) }
        let size = raw.withUnsafeBytes { source in
            frame.withUnsafeMutableBytes { target in
                ZSTD_compressCCtx(
                    compressor, target.baseAddress, target.count, source.baseAddress, source.count, Self.level)
            }
        }
        if ZSTD_isError(size) != 0 { return String(cString: ZSTD_getErrorName(size)) }
        RowCoding.appendVarint(UInt64(raw.count), to: &out)
        RowCoding.appendVarint(UInt64(size), to: &out)
        frame.withUnsafeBufferPointer { out.append(contentsOf: $0[..<size]) }
        return nil
    }

    /// Decompresses one frame holding exactly `rawCount` bytes into the
    /// start of `block`, replacing it by a larger one if needed (sized to
    /// fit, not doubled: a merge holds one block per run); returns the zstd
    /// error text (or a size mismatch) on failure. O(rawCount).
    func decompress(_ frame: UnsafeRawBufferPointer, rawCount: Int, into block: inout [UInt8]) -> String? {
        if block.count < rawCount {
            block = [UInt8](repeating: 0, count: max(rawCount, Self.blockBytes + Self.blockBytes / 8))
        }
        let size = block.withUnsafeMutableBytes { target in
            ZSTD_decompressDCtx(decompressor, target.baseAddress, rawCount, frame.baseAddress, frame.count)
        }
        if ZSTD_isError(size) != 0 { return String(cString: ZSTD_getErrorName(size)) }
        return size == rawCount ? nil : "a block holds \(size) bytes, its header says \(rawCount)"
    }
}
