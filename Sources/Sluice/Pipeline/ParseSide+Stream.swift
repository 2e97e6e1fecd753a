/// Inputs' identities: a file's is known before it is read; standard
/// input's is the length and checksum of the prefix read so far, which a
/// resume must find repeated.
extension ParseSide {
    /// The identity of input `name` when it is a file; `nil` for a stream.
    func fileIdentity(_ name: String) -> InputIdentity? { identities[name] ?? nil }

    /// Standard input: extends the checksum over the next bytes, sets the
    /// identity checkpoints record, and when resuming checks the prefix the
    /// interrupted run read. O(bytes).
    func followStream(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        if let expected = streamToVerify, inputBytes + Int64(bytes.count) >= expected.size {
            let head = UnsafeRawBufferPointer(rebasing: bytes[..<Int(expected.size - inputBytes)])
            guard InputIdentity.checksum(streamChecksum, extendedWith: head) == expected.headChecksum else {
                throw .usage(
                    "cannot resume: \(input?.name ?? "-") differs from the stream of the interrupted run (\(expected)); run the import without --resume"
                )
            }
            streamToVerify = nil
        }
        streamChecksum = InputIdentity.checksum(streamChecksum, extendedWith: bytes)
        streamIdentity = .streamPrefix(bytes: inputBytes + Int64(bytes.count), checksum: streamChecksum)
    }
}
