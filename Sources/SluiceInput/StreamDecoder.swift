/// What one decompression call did.
struct DecodeStep {
    /// Compressed bytes taken from the input.
    var consumed: Int
    /// Decompressed bytes written to the output.
    var produced: Int
    /// The current member (gzip member, bzip2 stream, zstd frame, xz file)
    /// ended cleanly with this call.
    var ended: Bool
}

/// A failure reported by a decompression library.
struct DecoderFailure: Error {
    var reason: String
}

/// One compression format's streaming decoder, wrapping its C library.
///
/// A decoder decodes members one after another: ``begin()`` starts a member,
/// ``decode(_:into:finishing:)`` is called until it reports `ended`; another
/// ``begin()`` then starts the next member of a multi-member file.
protocol StreamDecoder: AnyObject {
    /// Prepares to decode a new member (the first, or one after a clean end).
    func begin() throws(DecoderFailure)

    /// Decodes from `input` into `output`. `finishing` says no input follows
    /// what is given (xz needs to know to report its end).
    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        finishing: Bool
    ) throws(DecoderFailure) -> DecodeStep
}
