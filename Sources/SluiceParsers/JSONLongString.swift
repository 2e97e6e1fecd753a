/// The rest of a long JSON string, read by ``JSONPushParser`` itself instead
/// of being held whole in yajl's token buffer: escapes are decoded as yajl
/// decodes them and control characters refused as yajl refuses them (UTF-8
/// and surrogate pairs were checked by ``JSONTextValidator`` before). The
/// decoded bytes wait in ``decoded`` until the parser hands them over, once
/// per chunk: memory is one chunk of the string, not the string (a key,
/// which the handler takes whole, is gathered whole).
struct JSONLongString {
    /// A byte yajl would refuse: where it is in the bytes read, and the text
    /// after an opening quote that makes yajl refuse it the same way.
    struct Damage: Error {
        var offset: Int
        var sample: [UInt8]
    }

    /// Whether the string is an object member's key.
    let isKey: Bool
    /// Bytes of the string's source text from its opening quote on, as yajl
    /// would hold them (max-field-bytes bounds them).
    private(set) var rawBytes: Int
    /// Decoded bytes not yet handed over.
    var decoded: [UInt8] = []
    /// What went wrong while the string was being read (yajl refused what
    /// came before it, or the handler refused a piece): the rest is read
    /// without being handed over, and the parser reports this where the
    /// string ends, as it would have for the string whole.
    var failure: ParseError.Reason?
    /// Whether yajl places ``failure`` at the string's start rather than
    /// just past it.
    var failsAtStart = false
    /// 0 between characters, 1 after a backslash, 2...5 after `\u` and
    /// 0...3 hex digits.
    private var escape = 0
    private var unit: UInt32 = 0
    /// A high surrogate waiting for its low half (the validator checked it
    /// comes next), or 0.
    private var high: UInt32 = 0

    /// A string whose first `rawBytes` of source text yajl has taken.
    init(isKey: Bool, rawBytes: Int) {
        self.isKey = isKey
        self.rawBytes = rawBytes
    }

    /// Reads `bytes` up to the string's closing quote, appending what they
    /// decode to into ``decoded``; the offset just past the quote, or nil
    /// when the string goes on after `bytes`. O(bytes), runs of plain bytes
    /// copied at once.
    ///
    /// - Throws: ``Damage`` at a control character, an escape of a character
    ///   that cannot be escaped, or a `\u` without four hex digits.
    mutating func read(_ bytes: UnsafeRawBufferPointer) throws(Damage) -> Int? {
        let count = bytes.count
        var index = 0
        while index < count {
            if escape == 0 {
                var end = index
                while end < count, bytes[end] >= 0x20, bytes[end] != 0x22, bytes[end] != 0x5C { end += 1 }
                if failure == nil { decoded.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end])) }
                index = end
                guard index < count else { break }
                let byte = bytes[index]
                index += 1
                if byte == 0x22 {
                    rawBytes += index
                    return index
                }
                guard byte == 0x5C else { throw Damage(offset: index - 1, sample: [byte]) }
                escape = 1
                continue
            }
            try step(bytes[index], at: index)
            index += 1
        }
        rawBytes += count
        return nil
    }

    /// One byte of an escape.
    private mutating func step(_ byte: UInt8, at offset: Int) throws(Damage) {
        if escape == 1 {
            escape = 0
            switch byte {
            case 0x22, 0x5C, 0x2F: append(byte)
            case UInt8(ascii: "b"): append(0x08)
            case UInt8(ascii: "f"): append(0x0C)
            case UInt8(ascii: "n"): append(0x0A)
            case UInt8(ascii: "r"): append(0x0D)
            case UInt8(ascii: "t"): append(0x09)
            case UInt8(ascii: "u"): (escape, unit) = (2, 0)
            default: throw Damage(offset: offset, sample: [0x5C, byte])
            }
            return
        }
        guard let digit = JSONTextValidator.hexValue(byte) else {
            let digits = Array(repeating: UInt8(ascii: "0"), count: escape - 2)
            throw Damage(offset: offset, sample: [0x5C, UInt8(ascii: "u")] + digits + [byte])
        }
        unit = unit << 4 | digit
        escape += 1
        guard escape == 6 else { return }
        escape = 0
        if (0xD800...0xDBFF).contains(unit) {
            high = unit
            return
        }
        var scalar = unit
        if high != 0 {
            scalar = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
            high = 0
        }
        appendUTF8(scalar)
    }

    private mutating func append(_ byte: UInt8) {
        if failure == nil { decoded.append(byte) }
    }

    /// Appends `scalar`'s UTF-8 form.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            append(UInt8(scalar))
        case 0x80..<0x800:
            append(UInt8(0xC0 | scalar >> 6))
            append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            append(UInt8(0xE0 | scalar >> 12))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        default:
            append(UInt8(0xF0 | scalar >> 18))
            append(UInt8(0x80 | scalar >> 12 & 0x3F))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
