/// One row of PostgreSQL's binary `COPY … TO STDOUT` format, read in place:
/// a field count, then each field as a big-endian length (-1 for NULL) and
/// its bytes (the format ``CopyBuffer`` writes). The first row of a copy
/// carries the signature and header before it; the last message is the
/// trailer, a field count of -1.
struct CopyRow {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The signature of the binary format, as ``CopyBuffer`` writes it too.
    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    /// Skips the signature, the flags and the header extension; false when
    /// the bytes do not start with them.
    mutating func skipHeader() -> Bool {
        let fixed = Self.signature.count + 8
        guard bytes.count >= fixed, bytes.prefix(Self.signature.count).elementsEqual(Self.signature) else {
            return false
        }
        position = Self.signature.count + 4
        guard let more = int32(), more >= 0, bytes.count - position >= Int(more) else { return false }
        position += Int(more)
        return true
    }

    /// Whether this message is the copy's trailer (or holds nothing more).
    var isTrailer: Bool {
        bytes.count - position < 2 || (bytes[position] == 0xFF && bytes[position + 1] == 0xFF)
    }

    /// Skips the field count; returns it (nil past the end).
    mutating func fieldCount() -> Int? {
        guard bytes.count - position >= 2 else { return nil }
        let count = Int(UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1]))
        position += 2
        return count
    }

    /// The next field's bytes: nil past the end of the row, `.some(nil)` for
    /// NULL.
    mutating func field() -> UnsafeRawBufferPointer?? {
        guard let length = int32() else { return nil }
        if length < 0 { return .some(nil) }
        guard bytes.count - position >= Int(length) else { return nil }
        defer { position += Int(length) }
        return .some(UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(length)]))
    }

    private mutating func int32() -> Int32? {
        guard bytes.count - position >= 4 else { return nil }
        defer { position += 4 }
        return Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: position, as: Int32.self))
    }
}
