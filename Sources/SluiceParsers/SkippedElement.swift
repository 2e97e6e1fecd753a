#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an XML element that the parse skips moves libxml2's location by
/// (``XMLPushParser/feed(skipping:starts:ends:)``): its bytes, its line
/// breaks (`\n`, the only byte libxml2 counts a line at) and the bytes of
/// its last line, with those among them that continue a UTF-8 character.
/// Costs a search for each line break (`memchr`) and a count of the
/// continuation bytes after the last, eight bytes at a time.
struct SkippedElement {
    /// Whether the location is moved past the element: if not, its bytes
    /// are not counted (``XMLPushParser/feed(skipping:starts:ends:located:)``).
    let located: Bool
    private(set) var bytes = 0
    private(set) var lineBreaks = 0
    private var lastLineBytes = 0
    private var lastLineContinuations = 0

    /// The columns of the element's last line: its characters when the
    /// document is read as UTF-8 (libxml2 counts characters), else its bytes.
    func lastLineColumns(utf8: Bool) -> Int {
        utf8 ? lastLineBytes - lastLineContinuations : lastLineBytes
    }

    /// An element whose bytes are counted when `located`.
    init(located: Bool = true) { self.located = located }

    /// Adds the element's next bytes.
    mutating func add(_ piece: UnsafeRawBufferPointer) {
        guard located, let base = piece.baseAddress, piece.count > 0 else { return }
        bytes += piece.count
        let input = base.assumingMemoryBound(to: UInt8.self)
        var lastLineStart = 0
        while let found = memchr(base + lastLineStart, Int32(UInt8(ascii: "\n")), piece.count - lastLineStart) {
            lineBreaks += 1
            lastLineStart = base.distance(to: UnsafeRawPointer(found)) + 1
        }
        if lastLineStart > 0 {
            lastLineBytes = 0
            lastLineContinuations = 0
        }
        let count = piece.count - lastLineStart
        lastLineBytes += count
        lastLineContinuations += Self.continuationBytes(input + lastLineStart, count: count)
    }

    /// The bytes among `count` at `bytes` that continue a UTF-8 character
    /// (`10xxxxxx`), eight at a time.
    private static func continuationBytes(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        var found = 0
        var index = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
            // Bit 7 set and bit 6 clear, in each byte, as 1 in bit 0; the
            // product sums the eight bytes in its top byte.
            let ones = (word & ~(word << 1) & 0x8080_8080_8080_8080) >> 7
            found += Int((ones &* 0x0101_0101_0101_0101) >> 56)
            index += 8
        }
        while index < count {
            if bytes[index] & 0xC0 == 0x80 { found += 1 }
            index += 1
        }
        return found
    }
}
