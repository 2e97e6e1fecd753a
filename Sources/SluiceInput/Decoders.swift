import CSluiceBZip2
import CSluiceLZMA
import CSluiceZlib
import CSluiceZstd

/// gzip through zlib's `inflate`, one member at a time.
final class GzipDecoder: StreamDecoder {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var initialised = false

    deinit {
        if initialised { inflateEnd(stream) }
        stream.deallocate()
    }

    func begin() throws(DecoderFailure) {
        if initialised {
            guard inflateReset(stream) == Z_OK else { throw DecoderFailure(reason: "cannot reset zlib") }
            return
        }
        stream.initialize(to: z_stream())
        // 15 window bits + 16: gzip wrapper only, no raw zlib streams.
        let code = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else { throw DecoderFailure(reason: "cannot start zlib (\(code))") }
        initialised = true
    }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws(DecoderFailure) -> DecodeStep {
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let code = inflate(stream, Z_NO_FLUSH)
        let step = DecodeStep(
            consumed: input.count - Int(stream.pointee.avail_in),
            produced: output.count - Int(stream.pointee.avail_out),
            ended: code == Z_STREAM_END)
        switch code {
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
            return step
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
            throw DecoderFailure(reason: message)
        }
    }
}

/// bzip2 through libbz2, one stream at a time (pbzip2 writes several).
final class Bzip2Decoder: StreamDecoder {
    private let stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
    private var initialised = false

    deinit {
        if initialised { BZ2_bzDecompressEnd(stream) }
        stream.deallocate()
    }

    func begin() throws(DecoderFailure) {
        if initialised { BZ2_bzDecompressEnd(stream) }
        stream.initialize(to: bz_stream())
        let code = BZ2_bzDecompressInit(stream, 0, 0)
        guard code == BZ_OK else { throw DecoderFailure(reason: "cannot start libbz2 (\(code))") }
        initialised = true
    }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws(DecoderFailure) -> DecodeStep {
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: input.baseAddress?.assumingMemoryBound(to: CChar.self))
        stream.pointee.avail_in = UInt32(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_out = UInt32(output.count)
        let code = BZ2_bzDecompress(stream)
        let step = DecodeStep(
            consumed: input.count - Int(stream.pointee.avail_in),
            produced: output.count - Int(stream.pointee.avail_out),
            ended: code == BZ_STREAM_END)
        switch code {
        case BZ_OK, BZ_STREAM_END:
            return step
        case BZ_DATA_ERROR_MAGIC:
            throw DecoderFailure(reason: "not a bzip2 stream (bad magic)")
        case BZ_DATA_ERROR:
            throw DecoderFailure(reason: "data integrity error")
        case BZ_MEM_ERROR:
            throw DecoderFailure(reason: "out of memory")
        default:
            throw DecoderFailure(reason: "libbz2 error \(code)")
        }
    }
}

/// zstd through libzstd's streaming API; frames follow each other naturally.
final class ZstdDecoder: StreamDecoder {
    private let stream: OpaquePointer?

    init() { stream = ZSTD_createDStream() }

    deinit { ZSTD_freeDStream(stream) }

    func begin() throws(DecoderFailure) {
        guard stream != nil else { throw DecoderFailure(reason: "cannot start libzstd") }
        let code = ZSTD_initDStream(stream)
        if ZSTD_isError(code) != 0 { throw DecoderFailure(reason: String(cString: ZSTD_getErrorName(code))) }
    }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws(DecoderFailure) -> DecodeStep {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let code = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
        if ZSTD_isError(code) != 0 { throw DecoderFailure(reason: String(cString: ZSTD_getErrorName(code))) }
        return DecodeStep(consumed: inBuffer.pos, produced: outBuffer.pos, ended: code == 0)
    }
}

/// xz through liblzma, with concatenated .xz streams accepted.
final class XzDecoder: StreamDecoder {
    private let stream = UnsafeMutablePointer<lzma_stream>.allocate(capacity: 1)
    private var initialised = false

    deinit {
        if initialised { lzma_end(stream) }
        stream.deallocate()
    }

    func begin() throws(DecoderFailure) {
        if initialised { lzma_end(stream) }
        stream.initialize(to: lzma_stream())
        let code = lzma_stream_decoder(stream, UInt64.max, sluice_lzma_concatenated)
        guard code == LZMA_OK else { throw DecoderFailure(reason: "cannot start liblzma (\(code.rawValue))") }
        initialised = true
    }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws(DecoderFailure) -> DecodeStep {
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_in = input.count
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = output.count
        let code = lzma_code(stream, finishing ? LZMA_FINISH : LZMA_RUN)
        let step = DecodeStep(
            consumed: input.count - stream.pointee.avail_in,
            produced: output.count - stream.pointee.avail_out,
            ended: code == LZMA_STREAM_END)
        switch code {
        case LZMA_OK, LZMA_STREAM_END:
            return step
        case LZMA_BUF_ERROR:
            // No progress possible: at the end of the input this is truncation,
            // which the caller detects from `consumed == 0 && produced == 0`.
            return DecodeStep(consumed: step.consumed, produced: step.produced, ended: false)
        case LZMA_FORMAT_ERROR:
            throw DecoderFailure(reason: "not an xz stream")
        case LZMA_DATA_ERROR:
            throw DecoderFailure(reason: "compressed data is corrupt")
        case LZMA_MEM_ERROR, LZMA_MEMLIMIT_ERROR:
            throw DecoderFailure(reason: "out of memory")
        default:
            throw DecoderFailure(reason: "liblzma error \(code.rawValue)")
        }
    }
}
