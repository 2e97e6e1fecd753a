/// The compression formats sluice reads, recognised by their magic bytes.
/// Machinery (`package`): an app sees a format only as the name an
/// ``InputError`` gives.
package enum Compression: String, Sendable, CaseIterable, CustomStringConvertible {
    case none, gzip, bzip2, zstd, xz

    /// The format whose magic number starts `prefix`, or `.none`.
    ///
    /// Needs at most the first 6 bytes of the input; fewer bytes than a magic
    /// number's length never match it.
    package static func detect(_ prefix: UnsafeRawBufferPointer) -> Compression {
        func starts(with magic: [UInt8]) -> Bool {
            prefix.count >= magic.count && zip(prefix, magic).allSatisfy { $0 == $1 }
        }
        if starts(with: [0x1F, 0x8B]) { return .gzip }
        if starts(with: [0x42, 0x5A, 0x68]) { return .bzip2 }
        if starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        return .none
    }

    /// The longest magic number, i.e. how many bytes ``detect(_:)`` wants.
    package static let magicLength = 6

    package var description: String { rawValue }
}
