@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key cell of a batch as a set member, read in place: equal and hashed
/// as its ``LinkValue`` is (text and blob by their bytes, absent as null),
/// without copying the bytes. Valid only while the arena's bytes it was
/// made from are (inside their `withUnsafeBufferPointer`). What a batch's
/// stubs are checked against, so that each target is stubbed once: with a
/// ``LinkValue`` (an array allocated for each text key) and the target
/// table's name hashed for each link row, the links of 20,000 events cost
/// the store thread 57 M instructions more (applyLinks 327 M against 270 M
/// with this, 50,136 link rows; callgrind). O(key) to hash.
enum BatchKey: Hashable {
    case integer(Int64)
    case real(Double)
    case text(UnsafeRawBufferPointer)
    case null

    /// `cell`'s value, its text read in `bytes` (the arena's bytes).
    init(_ cell: Cell, _ bytes: UnsafeBufferPointer<UInt8>) {
        switch cell {
        case .integer(let value): self = .integer(value)
        case .real(let value): self = .real(value)
        case .text(let offset, let count), .blob(let offset, let count):
            self = .text(
                UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[Int(offset)..<Int(offset + count)]))
        // Keys are never spilled (RowMapper); as ``RowArena/withText(_:_:)``, no bytes.
        case .spilledText, .spilledBlob: self = .text(UnsafeRawBufferPointer(start: nil, count: 0))
        case .absent, .null: self = .null
        }
    }

    static func == (left: BatchKey, right: BatchKey) -> Bool {
        switch (left, right) {
        case (.integer(let one), .integer(let other)): return one == other
        case (.real(let one), .real(let other)): return one == other
        case (.text(let one), .text(let other)):
            return one.count == other.count
                && (one.isEmpty || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0)
        case (.null, .null): return true
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .text(let bytes):
            hasher.combine(2 as UInt8)
            hasher.combine(bytes.count)
            hasher.combine(bytes: bytes)
        case .null: hasher.combine(3 as UInt8)
        }
    }
}
