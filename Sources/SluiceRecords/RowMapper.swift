/// Turns one assembled record into one row of an entity's table.
public protocol RowMapper: AnyObject {
    /// The table rows are written for; may gain columns as records arrive
    /// (schemaless import), never lose any.
    var schema: TableSchema { get }

    /// Appends the row for `tree` to `arena`, widening the arena when the
    /// schema grew. O(attributes + tree nodes visited).
    ///
    /// - Throws: ``RecordError`` when a value cannot be converted or the key
    ///   is missing; the arena is left as it was.
    func appendRow(_ tree: RecordTree, ordinal: Int, into arena: inout RowArena) throws(RecordError)
}

/// Maps records through an ``EntityMapping``: the sources of each attribute
/// are tried in order and the value converted to the attribute type.
public final class EntityMapper: RowMapper {
    struct Attribute {
        var name: String
        var type: AttributeType
        var sources: [FieldPath]
        var onInvalid: InvalidValuePolicy
    }

    public let schema: TableSchema
    let attributes: [Attribute]

    init(schema: TableSchema, attributes: [Attribute]) {
        self.schema = schema
        self.attributes = attributes
    }

    public func appendRow(_ tree: RecordTree, ordinal: Int, into arena: inout RowArena) throws(RecordError) {
        arena.beginRow(ordinal: ordinal)
        for (column, attribute) in attributes.enumerated() {
            var node: Int32?
            for source in attribute.sources {
                node = tree.resolve(source)
                if node != nil { break }
            }
            guard let node else { continue }
            switch ValueConversion.cell(tree, node, as: attribute.type, into: &arena) {
            case .success(let cell):
                arena.set(column, cell)
            case .failure(let problem):
                if attribute.onInvalid == .null {
                    arena.set(column, .null)
                } else {
                    arena.abandonRow()
                    throw RecordError(entity: schema.name, attribute: attribute.name, message: problem.description)
                }
            }
        }
        let key = arena[arena.rowCount - 1, schema.keyColumn]
        if key == .absent || key == .null {
            arena.abandonRow()
            throw RecordError(
                entity: schema.name, attribute: schema.columns[schema.keyColumn].name,
                message: "the record has no key value")
        }
    }
}

/// Maps the top-level members of JSON objects to columns discovered as they
/// appear (no mapping file): numbers become INTEGER or REAL, strings TEXT,
/// booleans 0/1, nested values JSON text.
public final class SchemalessMapper: RowMapper {
    public private(set) var schema: TableSchema
    private var names: [[UInt8]]

    /// A mapper for table `entity` keyed by the member `key`.
    public init(entity: String, key: String) {
        schema = TableSchema(name: entity, columns: [ColumnSchema(name: key, type: .string)], keyColumn: 0)
        names = [Array(key.utf8)]
        keyTypeKnown = false
    }

    private var keyTypeKnown: Bool

    public func appendRow(_ tree: RecordTree, ordinal: Int, into arena: inout RowArena) throws(RecordError) {
        guard !tree.nodes.isEmpty, tree.nodes[0].kind == .object else {
            throw RecordError(entity: schema.name, attribute: nil, message: "expected a JSON object")
        }
        for child in tree.children(0) where column(named: tree.name(child)) == nil {
            schema.columns.append(ColumnSchema(name: String(decoding: tree.name(child), as: UTF8.self), type: inferredType(tree, child)))
            names.append(Array(tree.name(child)))
        }
        if !keyTypeKnown, let keyNode = tree.children(0).first(where: { tree.nameEquals($0, names[0]) }) {
            schema.columns[0].type = tree.nodes[Int(keyNode)].kind == .number ? .integer : .string
            keyTypeKnown = true
        }
        arena.widen(to: schema.columns.count)
        arena.beginRow(ordinal: ordinal)
        for child in tree.children(0) {
            guard let column = column(named: tree.name(child)) else { continue }
            let type = column == 0 ? schema.columns[0].type : inferredType(tree, child)
            switch ValueConversion.cell(tree, child, as: type, into: &arena) {
            case .success(let cell): arena.set(column, cell)
            case .failure(let problem):
                arena.abandonRow()
                throw RecordError(entity: schema.name, attribute: schema.columns[column].name, message: problem.description)
            }
        }
        let key = arena[arena.rowCount - 1, 0]
        if key == .absent || key == .null {
            arena.abandonRow()
            throw RecordError(entity: schema.name, attribute: schema.columns[0].name, message: "the record has no key value")
        }
    }

    private func column(named name: ArraySlice<UInt8>) -> Int? {
        names.firstIndex { $0.elementsEqual(name) }
    }

    private func inferredType(_ tree: RecordTree, _ node: Int32) -> AttributeType {
        switch tree.nodes[Int(node)].kind {
        case .number: return ValueConversion.integer(tree.value(node)) != nil ? .integer : .double
        case .true, .false: return .boolean
        case .object, .array: return .json
        default: return .string
        }
    }
}
