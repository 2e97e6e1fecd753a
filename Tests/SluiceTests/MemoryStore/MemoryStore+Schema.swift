@_spi(Machinery) import SluiceRecords
import SluiceStore

/// The memory store's tables: made from the schemas, widened with new
/// columns, their types migrated when the mapping changes them, a changed
/// key refused; link tables made once.
extension MemoryStore {
    func storedColumns(of name: String) throws(StoreError) -> [ColumnSchema]? {
        state.tables[name].map { $0.columns.map { ColumnSchema(name: $0.name, type: $0.affinity.attributeType) } }
    }

    func prepare(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError) {
        try transaction { () throws(StoreError) in
            for schema in schemas { try ensureTable(schema) }
            for link in links { ensureLinkTable(link) }
            linkSchemas = links
        }
    }

    /// Creates the table of `schema`, or adds the columns it lacks (stored
    /// rows get their default), after checking its key and migrating
    /// changed types. O(columns), and O(rows) to add a column or migrate.
    func ensureTable(_ schema: TableSchema) throws(StoreError) {
        schemas[schema.name] = schema
        let columns = schema.columns.map {
            MemoryColumn(name: $0.name, affinity: MemoryAffinity($0.type), defaultValue: MemoryValue($0.defaultValue))
        }
        guard var table = state.tables[schema.name] else {
            state.tables[schema.name] = MemoryTable(columns: columns, key: schema.keyColumns)
            return
        }
        let action = "creating table \"\(schema.name)\""
        for index in schema.keyColumns where table.column(schema.columns[index].name) == nil {
            throw failure(action, "the existing table has no column \"\(schema.columns[index].name)\" for the key")
        }
        try checkKey(schema, table)
        if let migration = migrateTypes(schema, &table) { migrations.append(migration) }
        for column in columns where table.column(column.name) == nil {
            table.columns.append(column)
            let value = column.affinity.stored(column.defaultValue)
            table.transformRows { $0 + [value] }
        }
        state.tables[schema.name] = table
    }

    /// Refuses a mapping whose key is not the stored table's.
    private func checkKey(_ schema: TableSchema, _ table: MemoryTable) throws(StoreError) {
        let stored = table.key.map { table.columns[$0].name.lowercased() }
        let key = schema.keyColumns.map { schema.columns[$0].name.lowercased() }
        guard !stored.isEmpty, stored != key else { return }
        throw failure(
            "checking table \"\(schema.name)\" against the mapping",
            "the table is keyed by (\(stored.joined(separator: ", "))) but the mapping's key is "
                + "(\(key.joined(separator: ", "))); a table's key cannot change: import into a new store, or drop "
                + "table \"\(schema.name)\" (and its link tables) first")
    }

    /// Converts the columns whose stored type reads back as another
    /// attribute type than the mapping's to the mapping's type (and
    /// default), the values as the new type stores them. Returns the line
    /// saying what changed, or nil. O(rows) when something changed.
    private func migrateTypes(_ schema: TableSchema, _ table: inout MemoryTable) -> String? {
        var changes: [String] = []
        var changed: [Int] = []
        for (index, column) in table.columns.enumerated() {
            guard let mapped = schema.columns.first(where: { $0.name.lowercased() == column.name.lowercased() }) else {
                continue
            }
            let affinity = MemoryAffinity(mapped.type)
            guard affinity.storage.attributeType != column.affinity.storage.attributeType else { continue }
            changes.append("\(column.name) \(column.affinity.rawValue) → \(affinity.rawValue)")
            changed.append(index)
            table.columns[index] = MemoryColumn(
                name: column.name, affinity: affinity, defaultValue: MemoryValue(mapped.defaultValue))
        }
        guard !changes.isEmpty else { return nil }
        let columns = table.columns
        table.transformRows { row in
            var row = row
            for index in changed { row[index] = columns[index].affinity.stored(row[index]) }
            return row
        }
        return "\(schema.name): the mapping changed column types (\(changes.joined(separator: ", "))); "
            + "the table was rebuilt with them"
    }

    /// Creates the link table of `link` unless it exists: its columns in
    /// the order of a link row's cells, keyed by (source, position) when
    /// ordered, else (source, target entity, target).
    func ensureLinkTable(_ link: LinkSchema) {
        guard state.tables[link.name] == nil else { return }
        var columns = link.sourceColumns.map { MemoryColumn(name: $0.name, affinity: MemoryAffinity($0.type)) }
        columns.append(MemoryColumn(name: link.targetColumn.name, affinity: MemoryAffinity(link.targetColumn.type)))
        columns.append(MemoryColumn(name: "position", affinity: .integer))
        if !link.choices.isEmpty { columns.append(MemoryColumn(name: LinkSchema.entityColumnName, affinity: .text)) }
        columns += link.attributeColumns.map { MemoryColumn(name: $0.name, affinity: MemoryAffinity($0.type)) }
        let width = link.sourceColumns.count
        let key = Array(0..<width) + (link.ordered ? [width + 1] : (link.choices.isEmpty ? [] : [width + 2]) + [width])
        state.tables[link.name] = MemoryTable(columns: columns, key: key, prefixLength: width)
    }
}
