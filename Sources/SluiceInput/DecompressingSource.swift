/// Decompressed bytes of a compressed ``FileByteSource``.
///
/// Reads the compressed input in fixed-size chunks and decodes member after
/// member (multi-member gzip, multi-stream bzip2, multi-frame zstd,
/// concatenated xz). An input that ends inside a member is reported as
/// ``InputError/truncated(path:format:offset:)``, never as a short success.
/// Memory: one input chunk plus the C library's state (up to ~8 MiB for xz
/// and zstd windows).
package final class DecompressingSource: ByteSource {
    package var name: String { raw.name }
    package var consumedBytes: Int64 { raw.consumedBytes }
    package var totalBytes: Int64? { raw.totalBytes }
    package let compression: Compression

    private let raw: FileByteSource
    private let decoder: StreamDecoder
    private var input: UnsafeMutableRawBufferPointer
    private var position = 0
    private var filled = 0
    private var rawEnded = false
    private var memberOpen = false

    init(raw: FileByteSource, compression: Compression, decoder: StreamDecoder, chunkSize: Int) {
        self.raw = raw
        self.compression = compression
        self.decoder = decoder
        input = .allocate(byteCount: max(chunkSize, 1), alignment: 16)
    }

    deinit { input.deallocate() }

    /// Where in the compressed file the decoder stands.
    private var compressedOffset: Int64 { raw.consumedBytes - Int64(filled - position) }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            if position == filled && !rawEnded {
                filled = try raw.read(into: input)
                position = 0
                rawEnded = filled == 0
            }
            let available = UnsafeRawBufferPointer(rebasing: input[position..<filled])
            if available.isEmpty && rawEnded && !memberOpen { return 0 }
            do {
                if !memberOpen {
                    if available.isEmpty { continue }
                    try decoder.begin()
                    memberOpen = true
                }
                let step = try decoder.decode(available, into: buffer, finishing: rawEnded)
                position += step.consumed
                if step.ended { memberOpen = false }
                if step.produced > 0 { return step.produced }
                if step.ended || step.consumed > 0 { continue }
                if position == filled {
                    if rawEnded {
                        throw InputError.truncated(path: name, format: compression.rawValue, offset: compressedOffset)
                    }
                    continue
                }
                throw DecoderFailure(reason: "the decoder made no progress")
            } catch let failure as DecoderFailure {
                throw .corrupt(
                    path: name, format: compression.rawValue, offset: compressedOffset, reason: failure.reason)
            } catch let error as InputError {
                throw error
            } catch {
                throw .unreadable(path: name, reason: "\(error)")
            }
        }
    }
}
