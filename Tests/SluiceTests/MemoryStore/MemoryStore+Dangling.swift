@_spi(Machinery) import SluiceRecords
import SluiceStore

/// Links whose target row does not exist, counted at the end of a run
/// (``RowStore/danglingReferences(_:_:counted:)`` merges them).
extension MemoryStore {
    /// Per reference: how many rows name a key no target row has. O(rows).
    func danglingReferences(of schema: TableSchema) throws(StoreError) -> [DanglingCount] {
        let action = "counting dangling references"
        guard let table = state.tables[schema.name] else { throw failure(action, "no such table: \(schema.name)") }
        let columns = try positions(of: schema, in: table)
        return try schema.references.map { (reference) throws(StoreError) in
            let targets = try values(of: reference.targetKey, in: reference.targetTable, action)
            let count = table.rows.values.filter { row in
                let value = row[columns[reference.column]]
                return value != .null && !targets.contains(value)
            }.count
            return DanglingRelation.reference(schema, reference).count(count)
        }
    }

    /// How many of `link`'s rows naming `target` (all of them when its item
    /// value is empty) name a key its table does not hold. O(links).
    func danglingLinks(_ link: LinkSchema, to target: LinkTarget) throws(StoreError) -> Int {
        let action = "counting dangling links"
        guard let table = state.tables[link.name], let column = table.column(link.targetColumn.name) else {
            throw failure(action, "no such table: \(link.name)")
        }
        let entity = table.column(LinkSchema.entityColumnName)
        let keys = try values(of: target.key, in: target.table, action)
        let named = MemoryValue.text(Array(target.value.utf8))
        return table.rows.values.filter { row in
            (target.value.isEmpty || entity.map { row[$0] == named } ?? false) && !keys.contains(row[column])
        }.count
    }

    /// None: the memory store counts at every run's end, as PostgreSQL does.
    func storedDanglingCounts(_ relations: [DanglingRelation]) throws(StoreError) -> [String: Int] { [:] }

    /// Keeps nothing (``storedDanglingCounts(_:)``).
    func keepDanglingCounts(_ counts: [(relation: DanglingRelation, count: Int)]) throws(StoreError) {}

    /// The values column `name` of table `table` holds.
    private func values(of name: String, in table: String, _ action: String) throws(StoreError) -> Set<MemoryValue> {
        guard let stored = state.tables[table], let column = stored.column(name) else {
            throw failure(action, "no such column: \(table).\(name)")
        }
        return Set(stored.rows.values.map { $0[column] })
    }
}
