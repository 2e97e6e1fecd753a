@_spi(Machinery) import SluiceRecords
import SluiceStore

/// Delete-missing in the memory store: the keys each batch wrote are kept
/// in a set per entity; after a complete run the sweep removes the stored
/// rows within the entity's scope whose keys are not in it, and their links.
extension MemoryStore {
    func trackSeenKeys(of schema: TableSchema, resuming: Bool) throws(StoreError) {
        seenTracked.insert(schema.name)
        if !resuming { try transaction { state.seenKeys[schema.name] = nil } }
    }

    func markSeen(_ keys: RowArena, of schema: TableSchema) throws(StoreError) {
        guard seenTracked.contains(schema.name) else { return }
        try transaction {
            for row in 0..<keys.rowCount {
                let key = schema.keyColumns.enumerated().map {
                    MemoryAffinity(schema.columns[$0.element].type).stored(MemoryValue(keys, keys[row, $0.offset]))
                }
                state.seenKeys[schema.name, default: []].insert(key)
            }
        }
    }

    func hasSeenKeys(_ schema: TableSchema) throws(StoreError) -> Bool {
        !(state.seenKeys[schema.name]?.isEmpty ?? true)
    }

    func missingRows(_ schema: TableSchema) throws(StoreError) -> MissingRows {
        let table = state.tables[schema.name]
        let unseen = try unseenCondition(schema)
        return MissingRows(missing: table?.rows.values.filter(unseen).count ?? 0, stored: table?.rows.count ?? 0)
    }

    /// Deletes in one transaction; ``shouldAbort`` is asked before it.
    func deleteMissing(_ schema: TableSchema, links: [LinkSchema]) throws(StoreError) -> Int {
        let action = "deleting missing rows of \"\(schema.name)\""
        if shouldAbort?() == true { throw interruption(action) }
        let unseen = try unseenCondition(schema)
        return try transaction { () throws(StoreError) in
            guard var table = state.tables[schema.name] else { return 0 }
            let missing = table.rows.filter { unseen($0.value) }
            for key in missing.keys { table.replace(key, with: nil) }
            state.tables[schema.name] = table
            for key in missing.keys { deleteLinks(from: schema.name, source: key, in: links) }
            return missing.count
        }
    }

    func stopTrackingSeenKeys(run id: Int64) throws(StoreError) {
        guard !seenTracked.isEmpty else { return }
        try transaction {
            for name in seenTracked { state.seenKeys[name] = nil }
            if let index = state.runs.firstIndex(where: { $0.id == id }) { state.runs[index].swept = true }
        }
        seenTracked = []
    }

    /// The test that picks the rows of `schema`'s table the sweep deletes:
    /// key not seen, within the delete scope (stored columns' tests, and a
    /// parent the run saw).
    private func unseenCondition(_ schema: TableSchema) throws(StoreError) -> ([MemoryValue]) -> Bool {
        guard let table = state.tables[schema.name] else { return { _ in false } }
        let seen = state.seenKeys[schema.name] ?? []
        let key = table.key
        var tests: [([MemoryValue]) -> Bool] = [{ row in !seen.contains(key.map { row[$0] }) }]
        for (column, test) in schema.deleteScope {
            let position = try positions(of: schema, in: table)[column]
            switch test {
            case .exists(let present): tests.append { ($0[position] != .null) == present }
            case .oneOf(let values):
                let texts = Set(values.map { Array($0.utf8) })
                tests.append { $0[position].text.map(texts.contains) ?? false }
            case .noneOf(let values):
                let texts = Set(values.map { Array($0.utf8) })
                tests.append { $0[position].text.map { !texts.contains($0) } ?? true }
            }
        }
        if let parent = schema.deleteScopeParent {
            let position = try positions(of: schema, in: table)[parent.column]
            let parents = Set((state.seenKeys[parent.targetTable] ?? []).compactMap(\.first))
            tests.append { parents.contains($0[position]) }
        }
        return { row in tests.allSatisfy { $0(row) } }
    }
}
