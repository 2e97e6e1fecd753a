/// Maps the top-level members of JSON objects to columns discovered as they
/// appear (no mapping file).
///
/// A column's type is decided by the first value seen in it (or by the
/// table already in the store): integers `integer`, other numbers `double`,
/// booleans `boolean`, strings `string`, objects and arrays `json`. Every
/// later value is converted for that column the same way each run (a number
/// in a `string` column is stored as its text, an integer in a `double`
/// column as a double, a value that does not fit as itself), so that importing the same
/// records again finds every row unchanged.
package final class SchemalessMapper: RowMapper {
    package private(set) var schema: TableSchema
    private var names: [[UInt8]]
    /// The column names in lower case: column names that differ only in
    /// letter case are one name in the mapping language (as in SQLite), so
    /// that a table means the same in every store.
    private var foldedNames: Set<String>
    /// SQLite's default limit on a table's columns (SQLITE_MAX_COLUMN).
    static let maxColumns = 2_000
    /// Whether the key column's type is decided: by the first record that
    /// has the key, or by the stored table.
    private var keyTypeKnown = false

    /// A mapper for table `entity` keyed by the member `key`, written as the
    /// run's `defaults` say (there is no mapping to say otherwise).
    package init(entity: String, key: String, defaults: EntityDefaults) {
        schema = TableSchema(name: entity, columns: [ColumnSchema(name: key, type: .string)], keyColumns: [0])
        schema.settle(mode: nil, deleteMissing: nil, defaults)
        names = [Array(key.utf8)]
        foldedNames = [key.lowercased()]
    }

    package var tableIsReady: Bool { keyTypeKnown }
    /// A mapping without one has no hooks.
    package var runsHooks: Bool { false }

    /// Takes the stored table's columns and types (the key first, the rest in
    /// stored order); a stored table without the key column is left to the
    /// store to refuse.
    package func adopt(stored: [ColumnSchema]) {
        guard let key = stored.first(where: { $0.name == schema.columns[0].name }) else { return }
        schema.columns = [key] + stored.filter { $0.name != key.name }
        names = schema.columns.map { Array($0.name.utf8) }
        foldedNames = Set(schema.columns.map { $0.name.lowercased() })
        keyTypeKnown = true
    }

    package func appendRow(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena)
        throws(RecordError) -> RowOutcome
    {
        guard !tree.nodes.isEmpty, tree.nodes[0].kind == .object else {
            throw RecordError(entity: schema.name, attribute: nil, message: "expected a JSON object")
        }
        for child in tree.children(0) where column(named: tree.name(child)) == nil {
            let name = String(decoding: tree.name(child), as: UTF8.self)
            if foldedNames.contains(name.lowercased()),
                let same = schema.columns.first(where: { $0.name.lowercased() == name.lowercased() })
            {
                throw RecordError(
                    entity: schema.name, attribute: name,
                    message:
                        "members `\(same.name)` and `\(name)` differ only in letter case, which column names ignore; "
                        + "import them with a mapping that names their columns")
            }
            guard schema.columns.count < Self.maxColumns else {
                throw RecordError(
                    entity: schema.name, attribute: name,
                    message:
                        "the member would be column \(Self.maxColumns + 1), past SQLite's limit of \(Self.maxColumns) columns; "
                        + "import sparse members with a mapping (a json attribute can hold them)")
            }
            schema.columns.append(ColumnSchema(name: name, type: Self.type(of: tree, child)))
            names.append(Array(tree.name(child)))
            foldedNames.insert(name.lowercased())
        }
        if !keyTypeKnown, let keyNode = tree.children(0).first(where: { tree.nameEquals($0, names[0]) }) {
            schema.columns[0].type = tree.nodes[Int(keyNode)].kind == .number ? .integer : .string
            keyTypeKnown = true
        }
        arena.widen(to: schema.columns.count)
        arena.beginRow(ordinal: ordinal)
        for child in tree.children(0) {
            guard let column = column(named: tree.name(child)) else { continue }
            let rule = ValueRule(
                type: Self.conversion(of: tree, child, into: schema.columns[column].type, isKey: column == 0))
            // The key is never spilled: sorting and lookups read its bytes.
            switch ValueConversion.cell(tree, child, rule, spill: column == 0 ? nil : tree.spill, into: &arena) {
            case .success(let cell): arena.set(column, cell)
            case .failure(let problem):
                arena.abandonRow()
                throw RecordError(
                    entity: schema.name, attribute: schema.columns[column].name, message: problem.description)
            }
        }
        let key = arena[arena.rowCount - 1, 0]
        if key == .absent || key == .null {
            arena.abandonRow()
            throw RecordError(
                entity: schema.name, attribute: schema.columns[0].name, message: Self.missingKey(tree, key == .null))
        }
        return .appended
    }

    /// Why a record has no key: the key member is null, or absent, and then
    /// which members the record has (the first 20), so that a `--key` naming
    /// none of them says which would do.
    static func missingKey(_ tree: RecordTree, _ isNull: Bool) -> String {
        if isNull { return "the record's key member is null" }
        let members = tree.children(0).map { String(decoding: tree.name($0), as: UTF8.self) }
        guard !members.isEmpty else { return "the record has no key member (it has no members at all)" }
        let shown =
            members.prefix(20).joined(separator: ", ") + (members.count > 20 ? ", … (\(members.count) in all)" : "")
        return "the record has no key member; its members are: \(shown)"
    }

    /// Zero-config records never delete: there is no mapping to say when.
    package func appendDeletion(_ tree: RecordTree, root: Int32, ordinal: Int, into arena: inout RowArena)
        throws(RecordError) -> RowOutcome
    {
        throw RecordError(
            entity: schema.name, attribute: nil, message: "an import without a mapping cannot delete records")
    }

    private func column(named name: ArraySlice<UInt8>) -> Int? {
        names.firstIndex { $0.elementsEqual(name) }
    }

    /// The column type a first value decides.
    static func type(of tree: RecordTree, _ node: Int32) -> AttributeType {
        switch tree.nodes[Int(node)].kind {
        case .number: return ValueConversion.integer(tree.value(node)) != nil ? .integer : .double
        case .true, .false: return .boolean
        case .object, .array: return .json
        default: return .string
        }
    }

    /// How a value is converted for a column of `type`: into the column's
    /// type where that loses nothing, else as its own kind. The key converts
    /// into the key's type, or fails with a message naming the value.
    static func conversion(of tree: RecordTree, _ node: Int32, into type: AttributeType, isKey: Bool) -> AttributeType {
        if isKey { return type }
        let own = Self.type(of: tree, node)
        switch (type, own) {
        case (.json, _): return .json
        case (_, .json): return .json
        case (.string, _): return .string
        case (.double, .integer), (.double, .double): return .double
        case (.integer, .boolean), (.boolean, .boolean): return .boolean
        case (.integer, .integer), (.boolean, .integer): return .integer
        default: return own
        }
    }
}
