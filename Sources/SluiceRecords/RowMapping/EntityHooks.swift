/// Swift code a library caller runs for each record of one entity, on the
/// parsing thread, in record order. A hook that throws stops the import like
/// a bad record: the batch being filled is dropped, committed batches stay.
public struct EntityHooks: Sendable {
    /// Returns false to skip the record (counted as skipped).
    public var shouldImport: (@Sendable (RecordView) throws -> Bool)?
    /// Called before the record's values are converted.
    public var willImport: (@Sendable (RecordView) throws -> Void)?
    /// Called with the row's converted values once they are batched.
    public var didImport: (@Sendable (RowView) throws -> Void)?
    /// Per attribute name: receives the raw source value of a present field
    /// and returns the value to store, or `nil` to fall back to the built-in
    /// conversion (MagicalRecord's `import<Attribute>:`).
    public var valueHandlers: [String: @Sendable (RawValue) throws -> StoredValue?]

    /// Hooks that do nothing until set.
    public init(
        shouldImport: (@Sendable (RecordView) throws -> Bool)? = nil,
        willImport: (@Sendable (RecordView) throws -> Void)? = nil,
        didImport: (@Sendable (RowView) throws -> Void)? = nil,
        valueHandlers: [String: @Sendable (RawValue) throws -> StoredValue?] = [:]
    ) {
        self.shouldImport = shouldImport
        self.willImport = willImport
        self.didImport = didImport
        self.valueHandlers = valueHandlers
    }
}

/// A read-only view of the record being imported, for hooks.
public struct RecordView {
    let tree: RecordTree
    let kind: DocumentKind
    /// The record's 1-based number in its input.
    public let ordinal: Int

    /// The source text at `path` (the mapping's source syntax), `nil` when
    /// absent or null; objects and arrays come back as JSON. O(path).
    public func text(at path: String) -> String? {
        guard case .success(let parsed) = FieldPath.parse(path, kind: kind), let node = tree.resolve(parsed) else {
            return nil
        }
        return RawValue(tree, node).text
    }
}

/// A source value as the input wrote it.
public struct RawValue: Sendable, Equatable {
    /// What kind of value the source held.
    public enum Kind: Sendable, Equatable {
        /// Text: a JSON string, or XML element or attribute text.
        case string
        /// A JSON number (``text`` is its digits).
        case number
        /// A JSON boolean (``text`` is `true` or `false`).
        case boolean
        /// JSON null (``text`` is `nil`).
        case null
        /// A JSON object or array, or an XML element with children (``text``
        /// is its JSON form).
        case structured
    }

    /// The kind.
    public var kind: Kind
    /// The text, `nil` for null.
    public var text: String?

    /// Creates a raw value.
    public init(kind: Kind, text: String?) {
        self.kind = kind
        self.text = text
    }

    init(_ tree: RecordTree, _ node: Int32) {
        let entry = tree.nodes[Int(node)]
        switch entry.kind {
        case .null: self.init(kind: .null, text: nil)
        case .true, .false: self.init(kind: .boolean, text: String(decoding: tree.scalarText(node), as: UTF8.self))
        case .number: self.init(kind: .number, text: String(decoding: tree.value(node), as: UTF8.self))
        case .string, .attribute: self.init(kind: .string, text: String(decoding: tree.value(node), as: UTF8.self))
        case .element where entry.firstChild < 0:
            self.init(kind: .string, text: String(decoding: tree.value(node), as: UTF8.self))
        case .object, .array, .element:
            var out: [UInt8] = []
            JSONText.write(tree, node, into: &out)
            self.init(kind: .structured, text: String(decoding: out, as: UTF8.self))
        }
    }
}

/// A value to store, as a value handler returns it.
public enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// The converted values of a row, for `didImport`.
public struct RowView {
    let schema: TableSchema
    let arena: RowArena
    let row: Int
    /// The record's 1-based number in its input.
    public let ordinal: Int

    /// The value stored for `attribute`; `nil` when the source did not have it.
    public subscript(attribute: String) -> StoredValue? {
        guard let column = schema.columns.firstIndex(where: { $0.name == attribute }) else { return nil }
        let cell = arena[row, column]
        switch cell {
        case .absent: return nil
        case .null: return .null
        case .integer(let value): return .integer(value)
        case .real(let value): return .real(value)
        case .text: return .text(arena.withText(cell) { String(decoding: $0, as: UTF8.self) })
        case .blob: return .blob(arena.withText(cell) { Array($0) })
        // RowMapper spills no value of an entity with `didImport`; read back
        // whole if one were here.
        case .spilledText: return arena.spilledBytes(cell).map { .text(String(decoding: $0, as: UTF8.self)) }
        case .spilledBlob: return arena.spilledBytes(cell).map { .blob($0) }
        }
    }
}
