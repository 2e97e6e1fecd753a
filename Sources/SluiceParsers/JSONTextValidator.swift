/// Checks what yajl lets through, chunk by chunk: the text must be strict
/// UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF),
/// contain no form feed (yajl takes it for whitespace; JSON does not), and
/// `\u` escapes of surrogates must come in high-low pairs (yajl turns lone
/// ones into `?` or invalid bytes). State carries across chunk boundaries.
///
/// Cost: one pass over the bytes, eight at a time where they are plain ASCII
/// without backslashes.
struct JSONTextValidator {
    /// What is wrong, and at which offset of the chunk.
    struct Problem: Error {
        var offset: Int
        var message: String
    }

    // UTF-8: continuation bytes still expected, and the range of the next one.
    private var continuations = 0
    private var nextLow: UInt8 = 0x80
    private var nextHigh: UInt8 = 0xBF
    // Escapes: 0 none, 1 after a backslash, 2...5 reading hex digits.
    private var escape = 0
    private var unit: UInt32 = 0
    // A high surrogate escape waits for its low half: 0 no, 1 expecting "\",
    // 2 expecting "u", 3 reading the low half's digits.
    private var awaitingLow = 0

    /// Checks the next chunk; throws the first problem found.
    mutating func check(_ chunk: UnsafeRawBufferPointer) throws(Problem) {
        guard let base = chunk.baseAddress else { return }
        let count = chunk.count
        var index = 0
        while index < count {
            if continuations == 0 && escape == 0 && awaitingLow == 0 && index + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 && !Self.hasByte(word, 0x5C) && !Self.hasByte(word, 0x0C) {
                    index += 8
                    continue
                }
            }
            try step(base.load(fromByteOffset: index, as: UInt8.self), at: index)
            index += 1
        }
    }

    /// How many of `bytes`' first bytes finish the character or escape (a
    /// surrogate pair's both halves) that the text checked so far ends
    /// inside: 0 when it ends between characters; nil when `bytes` does not
    /// finish it (or is not valid). A long string cut there ends on a whole
    /// character. O(1): at most 11 bytes are stepped, on a copy.
    func bytesToFinishCharacter(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var copy = self
        var index = 0
        while copy.continuations > 0 || copy.escape > 0 || copy.awaitingLow > 0 {
            guard index < bytes.count, (try? copy.step(bytes[index], at: index)) != nil else { return nil }
            index += 1
        }
        return index
    }

    /// At the end of the input: nothing may be left unfinished.
    func finish(at offset: Int) throws(Problem) {
        if continuations > 0 { throw Problem(offset: offset, message: "the input ends inside a UTF-8 sequence") }
        if awaitingLow > 0 {
            throw Problem(offset: offset, message: "a \\u escape of a high surrogate has no low surrogate after it")
        }
    }

    /// Whether any byte of `word` equals `byte`.
    private static func hasByte(_ word: UInt64, _ byte: UInt8) -> Bool {
        let spread = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
        return (spread &- 0x0101_0101_0101_0101) & ~spread & 0x8080_8080_8080_8080 != 0
    }

    private mutating func step(_ byte: UInt8, at offset: Int) throws(Problem) {
        if continuations > 0 {
            guard byte >= nextLow && byte <= nextHigh else {
                throw Problem(
                    offset: offset,
                    message:
                        "invalid UTF-8 (overlong form, encoded surrogate, code point above U+10FFFF or broken sequence)"
                )
            }
            continuations -= 1
            nextLow = 0x80
            nextHigh = 0xBF
            return
        }
        switch byte {
        case 0x00..<0x80: break
        case 0xC2...0xDF: continuations = 1
        case 0xE0: (continuations, nextLow) = (2, 0xA0)
        case 0xE1...0xEC, 0xEE, 0xEF: continuations = 2
        case 0xED: (continuations, nextHigh) = (2, 0x9F)
        case 0xF0: (continuations, nextLow) = (3, 0x90)
        case 0xF1...0xF3: continuations = 3
        case 0xF4: (continuations, nextHigh) = (3, 0x8F)
        default:
            throw Problem(offset: offset, message: "invalid UTF-8 byte 0x\(String(byte, radix: 16, uppercase: true))")
        }
        if byte == 0x0C { throw Problem(offset: offset, message: "form feed is not JSON whitespace") }
        try escapeStep(byte, at: offset)
    }

    private mutating func escapeStep(_ byte: UInt8, at offset: Int) throws(Problem) {
        switch (awaitingLow, escape) {
        case (1, 0):
            guard byte == 0x5C else { throw loneHigh(offset) }
            awaitingLow = 2
            escape = 1
            return
        case (2, 1):
            guard byte == UInt8(ascii: "u") else { throw loneHigh(offset) }
            awaitingLow = 3
            escape = 2
            unit = 0
            return
        default: break
        }
        switch escape {
        case 0:
            if byte == 0x5C { escape = 1 }
        case 1:
            if byte == UInt8(ascii: "u") {
                escape = 2
                unit = 0
            } else {
                escape = 0
            }
        default:
            guard let digit = Self.hexValue(byte) else {
                escape = 0
                awaitingLow = 0
                return
            }
            unit = unit << 4 | digit
            escape += 1
            guard escape == 6 else { return }
            escape = 0
            let isHigh = (0xD800...0xDBFF).contains(unit)
            let isLow = (0xDC00...0xDFFF).contains(unit)
            if awaitingLow == 3 {
                guard isLow else { throw loneHigh(offset) }
                awaitingLow = 0
            } else if isHigh {
                awaitingLow = 1
            } else if isLow {
                throw Problem(
                    offset: offset, message: "a \\u escape of a low surrogate has no high surrogate before it")
            }
        }
    }

    private func loneHigh(_ offset: Int) -> Problem {
        Problem(offset: offset, message: "a \\u escape of a high surrogate has no low surrogate after it")
    }

    /// The value of a hex digit, nil for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x37)
        case 0x61...0x66: return UInt32(byte - 0x57)
        default: return nil
        }
    }
}
