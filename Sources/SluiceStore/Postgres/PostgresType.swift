@_spi(Machinery) import SluiceRecords

/// The PostgreSQL type of a column, chosen by its attribute type, and how a
/// cell travels to it in binary `COPY`.
enum PostgresType: Equatable {
    case bigint, double, numeric, boolean, timestamp, jsonb, bytea, text

    init(_ attribute: AttributeType) {
        switch attribute {
        case .integer: self = .bigint
        case .double, .float: self = .double
        case .decimal: self = .numeric
        case .boolean: self = .boolean
        // The mapping's dates are UTC; the session's time zone is UTC.
        case .date: self = .timestamp
        case .json: self = .jsonb
        case .binary: self = .bytea
        case .string: self = .text
        }
    }

    /// The attribute type whose values a column of `declared` type (as
    /// `information_schema.columns.data_type` spells it) stores as they are.
    static func attributeType(declared: String) -> AttributeType {
        switch declared {
        case "bigint", "integer", "smallint": return .integer
        case "double precision", "real": return .double
        case "numeric": return .decimal
        case "boolean": return .boolean
        case "timestamp with time zone", "timestamp without time zone", "date": return .date
        case "jsonb", "json": return .json
        case "bytea": return .binary
        default: return .string
        }
    }

    /// The column type in `CREATE TABLE`.
    var sql: String {
        switch self {
        case .bigint: return "bigint"
        case .double: return "double precision"
        case .numeric: return "numeric"
        case .boolean: return "boolean"
        case .timestamp: return "timestamptz"
        case .jsonb: return "jsonb"
        case .bytea: return "bytea"
        case .text: return "text"
        }
    }

    /// The column's type as `information_schema.columns.data_type` names it.
    var storedName: String {
        switch self {
        case .timestamp: return "timestamp with time zone"
        default: return sql
        }
    }

    /// The type of the staging column the cell is copied into: the column's
    /// own, except numbers and times, which go as text and are cast by the
    /// server (their binary forms are the server's internal ones).
    var staging: String {
        switch self {
        case .numeric, .timestamp: return "text"
        default: return sql
        }
    }

    /// `expression` (a staging column) as a value of the column's type.
    func fromStaging(_ expression: String) -> String {
        staging == sql ? expression : "\(expression)::\(sql)"
    }

    /// Writes `cell` as a field of this type; throws a message when the
    /// value cannot be one (text that is no number, in a bigint column).
    func encode(_ cell: Cell, _ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout CopyBuffer) throws(CellMismatch) {
        switch (self, cell) {
        case (_, .absent), (_, .null): buffer.null()
        case (.bigint, .integer(let value)): buffer.int64(value)
        case (.bigint, .real(let value)):
            guard let exact = Int64(exactly: value) else { throw CellMismatch(cell: "\(value)") }
            buffer.int64(exact)
        case (.double, .integer(let value)): buffer.double(Double(value))
        case (.double, .real(let value)): buffer.double(value)
        case (.boolean, .integer(let value)): buffer.bool(value != 0)
        case (.boolean, .real(let value)): buffer.bool(value != 0)
        case (.bigint, .text(let offset, let length)), (.double, .text(let offset, let length)),
            (.boolean, .text(let offset, let length)):
            let text = String(decoding: Self.slice(bytes, offset, length), as: UTF8.self)
            switch self {
            case .bigint:
                guard let value = Int64(text) else { throw CellMismatch(cell: text) }
                buffer.int64(value)
            case .double:
                guard let value = Double(text) else { throw CellMismatch(cell: text) }
                buffer.double(value)
            default:
                guard let value = ["true": true, "false": false, "1": true, "0": false][text.lowercased()] else {
                    throw CellMismatch(cell: text)
                }
                buffer.bool(value)
            }
        case (.jsonb, .text(let offset, let length)), (.jsonb, .blob(let offset, let length)):
            buffer.field(Self.slice(bytes, offset, length), prefix: 1)
        case (.jsonb, .integer(let value)): buffer.text(String(value), prefix: 1)
        case (.jsonb, .real(let value)): buffer.text(Self.text(value), prefix: 1)
        case (_, .text(let offset, let length)), (_, .blob(let offset, let length)):
            buffer.field(Self.slice(bytes, offset, length))
        case (_, .integer(let value)): buffer.text(String(value))
        case (_, .real(let value)): buffer.text(Self.text(value))
        // Streamed from the side file by the merge's copy (`copySpilled`).
        case (_, .spilledText), (_, .spilledBlob): throw CellMismatch(cell: "a spilled value")
        }
    }

    /// A double as text that reads back as the same double, without an
    /// exponent for whole numbers.
    private static func text(_ value: Double) -> String {
        if let exact = Int64(exactly: value) { return "\(exact).0" }
        return "\(value)"
    }

    private static func slice(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int32, _ length: Int32)
        -> UnsafeBufferPointer<UInt8>
    {
        UnsafeBufferPointer(rebasing: bytes[Int(offset)..<Int(offset + length)])
    }
}

/// A cell whose value the column's type cannot hold.
struct CellMismatch: Error {
    var cell: String
}

/// `name` as a PostgreSQL identifier: in double quotes, inner quotes
/// doubled. PostgreSQL cuts names at 63 bytes; ``PostgresStore`` refuses
/// longer ones rather than let two names become one.
func pgQuoted(_ name: String) -> String {
    "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
}

/// `text` as a PostgreSQL string literal (standard strings: only quotes
/// are doubled).
func pgLiteral(_ text: String) -> String {
    "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
}

/// The longest identifier PostgreSQL keeps whole (NAMEDATALEN - 1).
let pgMaximumNameBytes = 63

/// A name sluice makes for its own tables and indexes from `base` and a
/// user's `name`, shortened with a hash of `name` when it would be too long.
func pgInternalName(_ base: String, _ name: String) -> String {
    let full = base + name
    guard full.utf8.count > pgMaximumNameBytes else { return full }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    var prefix = ""
    for character in full where prefix.utf8.count + character.utf8.count <= pgMaximumNameBytes - 17 {
        prefix.append(character)
    }
    let digits = String(hash, radix: 16)
    return prefix + "_" + String(repeating: "0", count: 16 - digits.count) + digits
}
