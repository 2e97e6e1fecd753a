@_spi(Machinery) import SluiceRecords

/// Tables made from the mapping with PostgreSQL types: keys as primary
/// keys, reference columns indexed, link tables keyed as in SQLite; an
/// existing table gains the columns it lacks and has changed types altered.
extension PostgresStore {
    package func prepare(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError) {
        try withSchemaLock("preparing the tables") { () throws(StoreError) in
            try forgetDanglingCountsOfMissingTables()
            for schema in schemas { try ensureTable(schema) }
            for link in links { try ensureLinkTable(link) }
        }
        linkSchemas = links
    }

    package func storedColumns(of name: String) throws(StoreError) -> [ColumnSchema]? {
        let stored = try storedColumnTypes(name)
        return stored.isEmpty
            ? nil : stored.map { ColumnSchema(name: $0.name, type: PostgresType.attributeType(declared: $0.type)) }
    }

    /// The columns of table `name` in the connection's schema and their
    /// `data_type`, in order.
    func storedColumnTypes(_ name: String) throws(StoreError) -> [(name: String, type: String)] {
        let result = try connection.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
                + "AND table_name = $1 ORDER BY ordinal_position", "reading the columns of \(pgQuoted(name))", [name])
        return (0..<result.rowCount).map { (result.value($0, 0) ?? "", result.value($0, 1) ?? "") }
    }

    /// Refuses a name PostgreSQL would cut at 63 bytes.
    func checkName(_ name: String, _ what: String) throws(StoreError) {
        guard name.utf8.count > pgMaximumNameBytes else { return }
        throw StoreError(
            path: self.name, action: "checking the name of \(what) \(pgQuoted(name))",
            message:
                "PostgreSQL keeps names of up to \(pgMaximumNameBytes) bytes and this one has \(name.utf8.count); rename it in the mapping",
            code: 0)
    }

    /// Creates the table, or adds the columns it lacks and alters the types
    /// that changed. O(columns).
    func ensureTable(_ schema: TableSchema) throws(StoreError) {
        try checkName(schema.name, "table")
        for column in schema.columns { try checkName(column.name, "column") }
        let table = pgQuoted(schema.name)
        let action = "creating table \(table)"
        let stored = try storedColumnTypes(schema.name)
        let keyNames = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        if stored.isEmpty {
            var definitions = schema.columns.map(columnDefinition)
            if !keyNames.isEmpty { definitions.append("PRIMARY KEY (\(keyNames.joined(separator: ", ")))") }
            try connection.execute("CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))", action)
        } else {
            let known = Set(stored.map(\.name))
            for index in schema.keyColumns where !known.contains(schema.columns[index].name) {
                throw StoreError(
                    path: name, action: action,
                    message: "the existing table has no column \(pgQuoted(schema.columns[index].name)) for the key",
                    code: 0)
            }
            let primaryKey = try self.primaryKey(of: schema.name)
            let key = schema.keyColumns.map { schema.columns[$0].name }
            if !primaryKey.isEmpty && primaryKey != key {
                throw StoreError(
                    path: name, action: "checking table \(table) against the mapping",
                    message: "the table is keyed by (\(primaryKey.joined(separator: ", "))) but the mapping's key is "
                        + "(\(key.joined(separator: ", "))); a table's key cannot change: import into a new database, or drop "
                        + "table \(table) (and its link tables) first", code: 0)
            }
            if let migration = try alterTypes(schema, stored) { migrations.append(migration) }
            for column in schema.columns where !known.contains(column.name) {
                try connection.execute(
                    "ALTER TABLE \(table) ADD COLUMN \(columnDefinition(column))",
                    "adding column \(pgQuoted(column.name)) to \(table)")
            }
            // ON CONFLICT needs a unique index on exactly the key.
            if primaryKey.isEmpty && !keyNames.isEmpty {
                try connection.execute(
                    "CREATE UNIQUE INDEX IF NOT EXISTS \(pgQuoted(pgInternalName("_sluice_key_", schema.name))) ON \(table) (\(keyNames.joined(separator: ", ")))",
                    "indexing the key of \(table)")
            }
        }
        for reference in schema.references {
            let column = schema.columns[reference.column].name
            try connection.execute(
                "CREATE INDEX IF NOT EXISTS \(pgQuoted(pgInternalName("_sluice_ref_", schema.name + "_" + column))) ON \(table) (\(pgQuoted(column)))",
                "indexing the reference \(pgQuoted(column)) of \(table)")
        }
        if seenTracked.contains(schema.name) { try alignKeyTables(schema) }
        let state: Table
        if let known = tables[schema.name] {
            state = known
        } else {
            state = Table(schema: schema)
            state.loadsDirectly = stored.isEmpty
            if !stored.isEmpty { state.loadsDirectly = try isEmptyWithOwnTypes(schema) }
        }
        state.schema = schema
        state.types = schema.columns.map { PostgresType($0.type) }
        tables[schema.name] = state
    }

    /// A column's definition: name, type and default.
    func columnDefinition(_ column: ColumnSchema) -> String {
        let type = PostgresType(column.type).sql
        var text = "\(pgQuoted(column.name)) \(type)"
        if let value = column.defaultValue { text += " DEFAULT \(Self.literal(value, type))" }
        return text
    }

    /// A default value as a literal of `type`.
    static func literal(_ value: DefaultValue?, _ type: String) -> String {
        switch value {
        case nil: return "NULL"
        case .integer(let number): return "CAST(\(number) AS \(type))"
        case .real(let number): return "CAST(\(number) AS \(type))"
        case .text(let text): return "CAST(\(pgLiteral(text)) AS \(type))"
        }
    }

    /// The primary key's column names, in key order; empty when it has none.
    func primaryKey(of table: String) throws(StoreError) -> [String] {
        try connection.strings(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) "
                + "WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)",
            "reading the key of \(pgQuoted(table))", [pgQuoted(table)]
        ).compactMap { $0 }
    }

    /// Alters the columns whose stored type holds another attribute type
    /// than the mapping's (`integer` changed to `string`, say), converting
    /// each value through its text; a value that does not convert fails the
    /// run before anything is written. Returns a line saying what changed.
    private func alterTypes(_ schema: TableSchema, _ stored: [(name: String, type: String)]) throws(StoreError)
        -> String?
    {
        var changes: [String] = []
        let table = pgQuoted(schema.name)
        for column in stored {
            guard let mapped = schema.columns.first(where: { $0.name == column.name }),
                PostgresType.attributeType(declared: column.type) != mapped.type
                    && PostgresType(PostgresType.attributeType(declared: column.type)) != PostgresType(mapped.type)
            else { continue }
            let type = PostgresType(mapped.type).sql
            try connection.execute(
                "ALTER TABLE \(table) ALTER COLUMN \(pgQuoted(column.name)) TYPE \(type) USING \(pgQuoted(column.name))::text::\(type)",
                "migrating the type of \(pgQuoted(column.name)) in \(table)")
            changes.append("\(column.name) \(column.type) → \(type)")
        }
        guard !changes.isEmpty else { return nil }
        try forgetDanglingCounts()
        return
            "\(schema.name): the mapping changed column types (\(changes.joined(separator: ", "))); the columns were altered"
    }

    /// Creates a link table: source key columns, target key, position;
    /// keyed by (source, position) when ordered, else (source, target), with
    /// an index on the target for joins from the other side.
    func ensureLinkTable(_ link: LinkSchema) throws(StoreError) {
        try checkName(link.name, "link table")
        let columns = linkColumns(link)
        let key =
            Array(columns[0..<link.sourceColumns.count].map(\.name))
            + (link.ordered
                ? ["position"] : (link.choices.isEmpty ? [] : [LinkSchema.entityColumnName]) + [link.targetColumn.name])
        let definitions = columns.map {
            "\(pgQuoted($0.name)) \($0.type.sql)" + (key.contains($0.name) ? " NOT NULL" : "")
        }
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS \(pgQuoted(link.name)) (\(definitions.joined(separator: ", ")), "
                + "PRIMARY KEY (\(key.map(pgQuoted).joined(separator: ", "))))",
            "creating the link table \(pgQuoted(link.name))")
        try createTargetIndex(link)
    }

    /// The columns of a link row in the order of its cells: source key,
    /// target key, position, target entity (with choices), attributes.
    func linkColumns(_ link: LinkSchema) -> [(name: String, type: PostgresType)] {
        link.sourceColumns.map { ($0.name, PostgresType($0.type)) } + [
            (link.targetColumn.name, PostgresType(link.targetColumn.type)), ("position", .bigint),
        ]
            + (link.choices.isEmpty ? [] : [(LinkSchema.entityColumnName, .text)])
            + link.attributeColumns.map { ($0.name, PostgresType($0.type)) }
    }

    /// The index on a link table's target, for joins from the target side.
    private func createTargetIndex(_ link: LinkSchema) throws(StoreError) {
        try connection.execute(
            "CREATE INDEX IF NOT EXISTS \(pgQuoted(pgInternalName("_sluice_target_", link.name))) ON \(pgQuoted(link.name)) "
                + "(\(pgQuoted(link.targetColumn.name)))",
            "indexing the link table \(pgQuoted(link.name))")
    }

    /// Before a bulk load into an empty link table: drops its target index,
    /// which ``endBulkLinks(_:)`` builds in one sorted pass instead of one
    /// insert per link (200,000 events, 500,000 links, server with fsync
    /// off: first load 4.7 s → 4.1–4.6 s in four runs). Returns whether it did. Under the schema lock,
    /// so that importers loading the same table at once agree; a run killed
    /// in between gets the index back when the next run prepares its tables.
    package func beginBulkLinks(_ link: LinkSchema) throws(StoreError) -> Bool {
        var dropped = false
        try withSchemaLock("dropping the target index of \(pgQuoted(link.name))") { () throws(StoreError) in
            guard
                try connection.strings("SELECT EXISTS (SELECT 1 FROM \(pgQuoted(link.name)))", "counting links").first
                    == "f"
            else { return }
            try connection.execute(
                "DROP INDEX IF EXISTS \(pgQuoted(pgInternalName("_sluice_target_", link.name)))",
                "dropping the target index of \(pgQuoted(link.name))")
            try forgetDanglingCount(of: link)
            dropped = true
        }
        if dropped { bulkLinks.insert(link.name) }
        return dropped
    }

    /// Builds the target index ``beginBulkLinks(_:)`` dropped.
    package func endBulkLinks(_ link: LinkSchema) throws(StoreError) {
        bulkLinks.remove(link.name)
        try withSchemaLock("indexing the link table \(pgQuoted(link.name))") { () throws(StoreError) in
            try createTargetIndex(link)
        }
    }
}
