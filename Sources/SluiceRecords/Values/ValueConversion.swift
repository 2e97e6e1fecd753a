#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a source value could not become its attribute's type.
package struct ConversionProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message, e.g. `expected an integer, found "12a"`.
    package let description: String
}

/// How one attribute converts source values: its type and date options.
struct ValueRule: Sendable {
    var type: AttributeType
    var patterns: [DatePattern] = []
    var epoch: EpochUnit = .seconds
}

/// Converts record-tree values to cells of an attribute type.
///
/// Integers are parsed from the source digits (never through a double), so
/// 64-bit ids stay exact.
enum ValueConversion {
    /// The cell for `node` under `rule`, text written into `arena`: the
    /// plain conversion when the type alone decides it, else the general one.
    /// With a `spill`, a value longer than ``ValueSpill/threshold`` that
    /// becomes text or bytes goes to it instead (``spilledCell(_:_:_:_:into:)``).
    static func cell(
        _ tree: RecordTree, _ node: Int32, _ rule: ValueRule, spill: ValueSpill? = nil, into arena: inout RowArena
    ) -> Result<Cell, ConversionProblem> {
        if let spill, tree.nodes[Int(node)].valueLength > ValueSpill.threshold,
            let cell = spilledCell(tree, node, rule, spill, into: &arena)
        {
            return .success(cell)
        }
        if rule.patterns.isEmpty, let cell = plainCell(tree, node, rule.type, into: &arena) { return .success(cell) }
        return generalCell(tree, node, rule, into: &arena)
    }

    /// The long value of `node` carried as a spilled cell: a string's text
    /// where the tree spilled it as it arrived (else written to `spill` from
    /// the tree's bytes), or a binary attribute's decoded bytes written
    /// there. `nil` (the value then converts as
    /// any other) for other types, for a string value that ``plainCell(_:_:_:into:)``
    /// would not take as it is, and when the spill cannot be written.
    /// O(value), one write.
    static func spilledCell(
        _ tree: RecordTree, _ node: Int32, _ rule: ValueRule, _ spill: ValueSpill, into arena: inout RowArena
    ) -> Cell? {
        let kind = tree.nodes[Int(node)].kind
        guard kind == .string || kind == .element || kind == .attribute else { return nil }
        switch rule.type {
        case .string:
            if let start = tree.spilledStart(node) {
                return arena.spilled(text: true, at: start, length: Int(tree.nodes[Int(node)].valueLength), in: spill)
            }
            return tree.withValueBytes(node) { bytes in
                spill.append(bytes).map { arena.spilled(text: true, at: $0, length: bytes.count, in: spill) }
            }
        case .binary:
            guard let decoded = Base64.decode(trimmed(tree.value(node))) else { return nil }
            return decoded.withUnsafeBytes { bytes in
                spill.append(bytes).map { arena.spilled(text: false, at: $0, length: bytes.count, in: spill) }
            }
        default: return nil
        }
    }

    /// The cell for `node` under `rule`, every case handled from the value's
    /// text (what ``plainCell(_:_:_:into:)`` must agree with).
    static func generalCell(
        _ tree: RecordTree, _ node: Int32, _ rule: ValueRule, into arena: inout RowArena
    ) -> Result<Cell, ConversionProblem> {
        let kind = tree.nodes[Int(node)].kind
        if kind == .null { return .success(.null) }
        let type = rule.type
        if type == .json {
            var out: [UInt8] = []
            JSONText.write(tree, node, into: &out)
            return .success(arena.text(out))
        }
        switch kind {
        case .object, .array:
            return .failure(
                ConversionProblem(
                    description: "expected a \(type.rawValue), found a JSON \(kind == .object ? "object" : "array")"))
        case .true, .false:
            let value = kind == .true
            switch type {
            case .boolean, .integer: return .success(.integer(value ? 1 : 0))
            case .string: return .success(arena.text(value ? Array("true".utf8) : Array("false".utf8)))
            default: return .failure(ConversionProblem(description: "expected a \(type.rawValue), found \(value)"))
            }
        default:
            return scalar(tree.value(node), isNumber: kind == .number, rule, into: &arena)
        }
    }

    /// The cell for `node` when converting it needs nothing but `type`:
    /// null; text into a string; JSON booleans into booleans and integers;
    /// plain integers, short decimals and plain UTC dates from their bytes in
    /// the tree. `nil` for everything else, which
    /// ``generalCell(_:_:_:into:)`` converts (with the same result);
    /// ``cell(_:_:_:into:)`` tries this first. No slice of the value is made:
    /// most values of most dumps take this path.
    static func plainCell(_ tree: RecordTree, _ node: Int32, _ type: AttributeType, into arena: inout RowArena) -> Cell?
    {
        let kind = tree.nodes[Int(node)].kind
        switch (kind, type) {
        case (.null, _): return .null
        case (.true, .boolean), (.true, .integer): return .integer(1)
        case (.false, .boolean), (.false, .integer): return .integer(0)
        case (.string, .string), (.element, .string), (.attribute, .string):
            return tree.withValueBytes(node) { arena.text($0) }
        case (.number, .integer): return tree.withValueBytes(node) { integer($0).map(Cell.integer) }
        case (.number, .double), (.number, .float): return tree.withValueBytes(node) { shortDecimal($0).map(Cell.real) }
        case (.string, .date):
            return tree.withValueBytes(node) { bytes in DateText.withPlainUTC(bytes) { arena.text($0) } }
        default: return nil
        }
    }

    /// The cell for source text `text` under `rule`.
    static func scalar(
        _ text: ArraySlice<UInt8>, isNumber: Bool, _ rule: ValueRule, into arena: inout RowArena
    ) -> Result<Cell, ConversionProblem> {
        switch rule.type {
        case .string, .json:
            if isNumber, let plain = plainDecimal(text, dropZeroFraction: true) { return .success(arena.text(plain)) }
            return .success(arena.text(text))
        case .integer:
            if let value = integer(trimmed(text)) { return .success(.integer(value)) }
            if let plain = plainDecimal(trimmed(text), dropZeroFraction: true), let value = integer(plain[...]) {
                return .success(.integer(value))
            }
            return .failure(problem("an integer", text))
        case .double, .float:
            if let value = double(trimmed(text)) { return .success(.real(value)) }
            return .failure(problem("a number", text))
        case .decimal:
            if let plain = plainDecimal(trimmed(text), dropZeroFraction: false) { return .success(arena.text(plain)) }
            return .failure(problem("a decimal number", text))
        case .boolean:
            if let value = boolean(trimmed(text)) { return .success(.integer(value ? 1 : 0)) }
            return .failure(problem("a boolean", text))
        case .binary:
            if let bytes = Base64.decode(trimmed(text)) { return .success(arena.blob(bytes)) }
            return .failure(problem("base64 data", text))
        case .date:
            let bare = trimmed(text)
            if rule.patterns.isEmpty, !isNumber, let cell = DateText.withPlainUTC(bare, { arena.text($0) }) {
                return .success(cell)
            }
            if let moment = date(bare, isNumber: isNumber, rule), DateText.isWritable(moment) {
                return .success(arena.text(DateText.format(moment)))
            }
            if isNumber || isEpochText(bare) {
                return .failure(problem("a date as epoch \(epochUnit(bare, rule).rawValue) from year 0 to 9999", text))
            }
            return .failure(
                problem(rule.patterns.isEmpty ? "an ISO-8601 date" : "a date as \(rule.patterns.map(\.text))", text))
        }
    }

    /// Custom patterns first, then epoch numbers (JSON numbers or digit
    /// strings), then ISO-8601.
    private static func date(_ text: ArraySlice<UInt8>, isNumber: Bool, _ rule: ValueRule) -> DateText.Moment? {
        for pattern in rule.patterns {
            if let moment = pattern.parse(text) { return moment }
        }
        if isNumber || isEpochText(text) {
            guard let count = DateText.parseEpochSeconds(text) else { return nil }
            let micros: Int64
            switch epochUnit(text, rule) {
            case .seconds, .auto: return count
            case .milliseconds:
                // The fraction of a millisecond is kept to the microsecond.
                let scaled = count.seconds.multipliedReportingOverflow(by: 1_000)
                guard !scaled.overflow else { return nil }
                micros = scaled.partialValue + Int64(count.microseconds / 1_000)
            case .microseconds: micros = count.seconds
            case .nanoseconds: micros = count.seconds.floorDiv(1_000)
            }
            let seconds = micros.floorDiv(1_000_000)
            return DateText.Moment(seconds: seconds, microseconds: Int(micros - seconds * 1_000_000))
        }
        return DateText.parseISO(text)
    }

    /// The unit of epoch number `text`: the rule's, or under `auto` the one
    /// its integer digits say.
    private static func epochUnit(_ text: ArraySlice<UInt8>, _ rule: ValueRule) -> EpochUnit {
        guard rule.epoch == .auto else { return rule.epoch }
        return EpochUnit.byDigits(text.prefix { $0 != 0x2E }.filter { $0 != 0x2D }.count)
    }

    /// `-?digits(.digits)?`: a number of seconds or milliseconds.
    private static func isEpochText(_ text: ArraySlice<UInt8>) -> Bool {
        let unsigned = text.first == 0x2D ? text.dropFirst() : text
        let parts = unsigned.split(separator: 0x2E, maxSplits: 1, omittingEmptySubsequences: false)
        return !unsigned.isEmpty && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
    }

    private static func problem(_ expected: String, _ text: ArraySlice<UInt8>) -> ConversionProblem {
        var shown = String(decoding: text.prefix(60), as: UTF8.self)
        if text.count > 60 { shown += "…" }
        return ConversionProblem(description: "expected \(expected), found \"\(shown)\"")
    }

    /// `text` without leading and trailing ASCII whitespace.
    static func trimmed(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }

    /// A decimal integer with optional sign, optionally followed by a zero
    /// fraction (`12.0`); `nil` on anything else or on overflow.
    static func integer<Text: RandomAccessCollection<UInt8>>(_ text: Text) -> Int64? where Text.Index == Int {
        var index = text.startIndex
        guard index < text.endIndex else { return nil }
        var negative = false
        if text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        while index < text.endIndex, text[index] >= 0x30, text[index] <= 0x39 {
            let digit = Int64(text[index] - 0x30)
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = next
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        if index < text.endIndex && text[index] == UInt8(ascii: ".") {
            index += 1
            guard index < text.endIndex else { return nil }
            while index < text.endIndex, text[index] == 0x30 { index += 1 }
        }
        return index == text.endIndex ? value : nil
    }

    /// A decimal number (`-12.50`, `1.5e3`) rewritten exactly without
    /// exponent (`-12.50`, `1500`); with `dropZeroFraction`, trailing zeros
    /// of the fraction and a bare point go too (`12.50` → `12.5`, `1.0` → `1`).
    /// `nil` when `text` is not a number or the exponent is beyond ±400.
    static func plainDecimal(_ text: ArraySlice<UInt8>, dropZeroFraction: Bool) -> [UInt8]? {
        var index = text.startIndex
        var negative = false
        if index < text.endIndex, text[index] == 0x2D || text[index] == 0x2B {
            negative = text[index] == 0x2D
            index += 1
        }
        var digits: [UInt8] = []
        var pointPosition: Int?
        while index < text.endIndex {
            let byte = text[index]
            if byte >= 0x30 && byte <= 0x39 {
                digits.append(byte)
            } else if byte == 0x2E && pointPosition == nil {
                pointPosition = digits.count
            } else {
                break
            }
            index += 1
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if index < text.endIndex, text[index] == 0x65 || text[index] == 0x45 {
            index += 1
            var sign = 1
            if index < text.endIndex, text[index] == 0x2D || text[index] == 0x2B {
                sign = text[index] == 0x2D ? -1 : 1
                index += 1
            }
            guard index < text.endIndex else { return nil }
            while index < text.endIndex, text[index] >= 0x30, text[index] <= 0x39 {
                exponent = exponent * 10 + Int(text[index] - 0x30)
                guard exponent <= 400 else { return nil }
                index += 1
            }
            exponent *= sign
        }
        guard index == text.endIndex else { return nil }
        // The value is 0.digits × 10^point.
        var point = (pointPosition ?? digits.count) + exponent
        while digits.count > 1, digits.first == 0x30, point > 1 {
            digits.removeFirst()
            point -= 1
        }
        var integerPart: [UInt8]
        var fraction: [UInt8]
        if point <= 0 {
            integerPart = [0x30]
            fraction = Array(repeating: 0x30, count: -point) + digits
        } else if point >= digits.count {
            integerPart = digits + Array(repeating: 0x30, count: point - digits.count)
            fraction = []
        } else {
            integerPart = Array(digits[..<point])
            fraction = Array(digits[point...])
        }
        while integerPart.count > 1, integerPart.first == 0x30 { integerPart.removeFirst() }
        if dropZeroFraction { while fraction.last == 0x30 { fraction.removeLast() } }
        let isZero = integerPart == [0x30] && fraction.allSatisfy { $0 == 0x30 }
        var out: [UInt8] = negative && !isZero ? [0x2D] : []
        out += integerPart
        if !fraction.isEmpty { out += [0x2E] + fraction }
        return out
    }

    /// A finite decimal number (JSON number syntax, leading `+` allowed).
    static func double(_ text: ArraySlice<UInt8>) -> Double? {
        if let value = shortDecimal(text) { return value }
        guard !text.isEmpty, text.count < 400,
            text.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45
            })
        else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer -> Double? in
            for (offset, byte) in text.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
            buffer[text.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &end)
            guard let end, end - buffer.baseAddress! == text.count, value.isFinite else { return nil }
            return value
        }
    }

    /// `-?digits(.digits)?` with at most 15 significant digits, converted
    /// without `strtod`: both the digits as an integer and the power of ten
    /// are exact doubles, so one division rounds correctly (Clinger's fast
    /// path). `nil` for anything else, which `strtod` then reads.
    static func shortDecimal<Text: RandomAccessCollection<UInt8>>(_ text: Text) -> Double? where Text.Index == Int {
        var index = text.startIndex
        let negative = index < text.endIndex && text[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = -1
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                guard fractionDigits < 0, digits > 0 else { return nil }
                fractionDigits = 0
            } else {
                let digit = byte &- 0x30
                guard digit <= 9, digits < 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(digit)
                digits += 1
                if fractionDigits >= 0 { fractionDigits += 1 }
            }
            index += 1
        }
        guard digits > 0, fractionDigits != 0 else { return nil }
        let value = Double(mantissa) / exactPowersOfTen[max(fractionDigits, 0)]
        return negative ? -value : value
    }

    /// 10⁰ through 10¹⁵, each exact as a double.
    private static let exactPowersOfTen: [Double] = (0...15).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// `true`/`false`, `yes`/`no`, `1`/`0`, any letter case.
    static func boolean(_ text: ArraySlice<UInt8>) -> Bool? {
        let lower = String(decoding: text, as: UTF8.self).lowercased()
        switch lower {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: return nil
        }
    }
}

/// Standard base64 (RFC 4648), padding optional, whitespace ignored.
enum Base64 {
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case 0x41...0x5A: value = UInt32(byte - 0x41)
            case 0x61...0x7A: value = UInt32(byte - 0x61 + 26)
            case 0x30...0x39: value = UInt32(byte - 0x30 + 52)
            case 0x2B, 0x2D: value = 62
            case 0x2F, 0x5F: value = 63
            case 0x3D:
                padding += 1
                continue
            case 0x20, 0x0A, 0x0D, 0x09: continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return padding <= 2 && bits < 6 ? out : nil
    }
}
