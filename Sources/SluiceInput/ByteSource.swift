/// A stream of bytes read front to back, in chunks the caller sizes.
///
/// Sources are single-pass and not thread-safe: one reader at a time.
package protocol ByteSource: AnyObject {
    /// The input's name in messages: a path, or `-` for standard input.
    var name: String { get }

    /// Bytes taken from the underlying file or pipe so far. For compressed
    /// input these are compressed bytes, which is what progress is measured on.
    var consumedBytes: Int64 { get }

    /// The size of the underlying file when it is known (regular files), used
    /// for progress and ETA; `nil` for pipes.
    var totalBytes: Int64? { get }

    /// How the bytes are compressed; `.none` for plain input.
    var compression: Compression { get }

    /// Fills the start of `buffer` with the next bytes and returns how many it
    /// wrote; 0 means the input is exhausted. Costs one `read(2)` per call for
    /// plain input, plus the decompression work for compressed input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int
}
