#if canImport(Glibc)
import Glibc
#endif

/// Why a source value could not become its attribute's type.
public struct ConversionProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message, e.g. `expected an integer, found "12a"`.
    public let description: String
}

/// Converts record-tree values to cells of an attribute type.
///
/// Integers are parsed from the source digits (never through a double), so
/// 64-bit ids stay exact.
enum ValueConversion {
    /// The cell for `node` as `type`, text written into `arena`.
    static func cell(
        _ tree: RecordTree, _ node: Int32, as type: AttributeType, into arena: inout RowArena
    ) -> Result<Cell, ConversionProblem> {
        let kind = tree.nodes[Int(node)].kind
        if kind == .null { return .success(.null) }
        if type == .json {
            var out: [UInt8] = []
            JSONText.write(tree, node, into: &out)
            return .success(arena.text(out))
        }
        switch kind {
        case .object, .array:
            return .failure(ConversionProblem(description: "expected a \(type.rawValue), found a JSON \(kind == .object ? "object" : "array")"))
        case .true, .false:
            let value = kind == .true
            switch type {
            case .boolean, .integer: return .success(.integer(value ? 1 : 0))
            case .string: return .success(arena.text(value ? Array("true".utf8) : Array("false".utf8)))
            default: return .failure(ConversionProblem(description: "expected a \(type.rawValue), found \(value)"))
            }
        default:
            return scalar(tree.value(node), isNumber: kind == .number, as: type, into: &arena)
        }
    }

    /// The cell for source text `text` as `type`.
    static func scalar(
        _ text: ArraySlice<UInt8>, isNumber: Bool, as type: AttributeType, into arena: inout RowArena
    ) -> Result<Cell, ConversionProblem> {
        switch type {
        case .string, .json:
            return .success(arena.text(text))
        case .integer:
            if let value = integer(trimmed(text)) { return .success(.integer(value)) }
            return .failure(problem("an integer", text))
        case .double:
            if let value = double(trimmed(text)) { return .success(.real(value)) }
            return .failure(problem("a number", text))
        case .boolean:
            if let value = boolean(trimmed(text)) { return .success(.integer(value ? 1 : 0)) }
            return .failure(problem("a boolean", text))
        case .date:
            let bare = trimmed(text)
            let moment = isNumber ? DateText.parseEpochSeconds(bare) : DateText.parseISO(bare)
            if let moment { return .success(arena.text(DateText.format(moment))) }
            return .failure(problem("an ISO-8601 date", text))
        }
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
    static func integer(_ text: ArraySlice<UInt8>) -> Int64? {
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
            let (next, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
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

    /// A finite decimal number (JSON number syntax, leading `+` allowed).
    static func double(_ text: ArraySlice<UInt8>) -> Double? {
        guard !text.isEmpty, text.count < 400,
            text.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 })
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
