import Foundation
@_spi(Machinery) import SluiceRecords

/// A value the memory store keeps, in SQLite's storage classes: the
/// conformance tests compare its tables with a SQLite store's, so it stores,
/// compares and prints values as SQLite does.
enum MemoryValue: Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])

    /// A batch cell as it is, without a column's conversion (absent reads
    /// as null, as a bound absent cell does).
    init(_ rows: RowArena, _ cell: Cell) {
        switch cell {
        case .absent, .null: self = .null
        case .integer(let value): self = .integer(value)
        case .real(let value): self = .real(value)
        case .text: self = .text(rows.withText(cell) { Array($0) })
        case .blob: self = .blob(rows.withText(cell) { Array($0) })
        case .spilledText: self = .text(rows.spilledBytes(cell) ?? [])
        case .spilledBlob: self = .blob(rows.spilledBytes(cell) ?? [])
        }
    }

    /// A column default as a literal.
    init(_ value: DefaultValue?) {
        switch value {
        case nil: self = .null
        case .integer(let number): self = .integer(number)
        case .real(let number): self = .real(number)
        case .text(let text): self = .text(Array(text.utf8))
        }
    }

    /// The value as SQLite prints it (`sqlite3_column_text`, `CAST … AS
    /// TEXT`): integers in decimal, reals as `%!.15g`, text and blobs as
    /// their bytes; nil for null.
    var text: [UInt8]? {
        switch self {
        case .null: return nil
        case .integer(let value): return Array(String(value).utf8)
        case .real(let value): return Array(Self.format(value).utf8)
        case .text(let bytes), .blob(let bytes): return bytes
        }
    }

    /// A real as SQLite prints it: 15 significant digits, always with a
    /// decimal point (`2.0`, `1.0e+20`).
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value < 0 ? "-Inf" : "Inf") }
        let printed = String(format: "%.15g", value)
        if printed.contains(".") { return printed }
        if let exponent = printed.firstIndex(of: "e") { return printed[..<exponent] + ".0" + printed[exponent...] }
        return printed + ".0"
    }

    /// SQLite's order of two values: null, then numbers (integers and reals
    /// compared by value), then text bytewise, then blobs.
    static func compare(_ left: MemoryValue, _ right: MemoryValue) -> Int {
        switch (left, right) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer(let a), .real(let b)): return Double(a) < b ? -1 : (Double(a) > b ? 1 : 0)
        case (.real(let a), .integer(let b)): return a < Double(b) ? -1 : (a > Double(b) ? 1 : 0)
        case (.real(let a), .real(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer, _), (.real, _): return -1
        case (_, .integer), (_, .real): return 1
        case (.text(let a), .text(let b)), (.blob(let a), .blob(let b)):
            return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        case (.text, .blob): return -1
        case (.blob, .text): return 1
        }
    }
}

/// How a column converts the values written to it: SQLite's type affinity
/// for the column types sluice declares. The raw value is the declared
/// type, as SQLite's `PRAGMA table_info` shows it (migration warnings name
/// it).
enum MemoryAffinity: String {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    /// A `json` attribute's column: TEXT affinity, a type that reads back as `json`.
    case json = "JSON TEXT"
    case blob = "BLOB"

    /// The column type of an attribute type, as the SQLite store declares it.
    init(_ type: AttributeType) {
        switch type {
        case .integer, .boolean: self = .integer
        case .double, .float: self = .real
        case .json: self = .json
        case .string, .date, .decimal: self = .text
        case .binary: self = .blob
        }
    }

    /// The attribute type whose values a column of this type stores as they
    /// are, as the SQLite store reads a declared type back (a BLOB column
    /// reads back as text).
    var attributeType: AttributeType {
        switch self {
        case .integer: return .integer
        case .real: return .double
        case .json: return .json
        case .text, .blob: return .string
        }
    }

    /// The affinity that decides how values are stored: a `JSON TEXT`
    /// column's is TEXT's (two columns of one store every value alike, and
    /// a type change between them migrates nothing).
    var storage: MemoryAffinity { self == .json ? .text : self }

    /// `value` as a column of this affinity stores it: numeric columns keep
    /// text that reads as a number as that number (an integer when it has
    /// no fraction), an INTEGER column a whole real as an integer, a REAL
    /// column an integer as a real, a TEXT column numbers as their text.
    func stored(_ value: MemoryValue) -> MemoryValue {
        switch (storage, value) {
        case (.integer, .text(let bytes)):
            guard let number = Self.number(bytes) else { return value }
            return number.integer.map { .integer($0) } ?? .real(number.real)
        case (.integer, .real(let number)): return Self.whole(number).map { .integer($0) } ?? value
        case (.real, .text(let bytes)): return Self.number(bytes).map { .real($0.real) } ?? value
        case (.real, .integer(let number)): return .real(Double(number))
        case (.text, .integer), (.text, .real): return .text(value.text ?? [])
        default: return value
        }
    }

    /// `bytes` as a number when they are one (surrounding spaces allowed):
    /// an integer when they read as one, or as a real without fraction.
    private static func number(_ bytes: [UInt8]) -> (integer: Int64?, real: Double)? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.allSatisfy({ "0123456789+-.eE".utf8.contains($0) }) else { return nil }
        if let integer = Int64(text) { return (integer, Double(integer)) }
        guard let real = Double(text), real.isFinite else { return nil }
        return (whole(real), real)
    }

    /// A real without fraction that an integer holds exactly.
    private static func whole(_ value: Double) -> Int64? {
        guard value.rounded() == value, abs(value) < 9.2e18 else { return nil }
        return Int64(value)
    }
}
