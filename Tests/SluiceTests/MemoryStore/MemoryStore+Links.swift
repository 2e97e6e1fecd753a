import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceStore

/// Relationships in the memory store: link rows per source (rewritten only
/// when they differ, added under `union`), children a `replace-and-delete`
/// batch dropped, key-only stub rows for missing targets.
extension MemoryStore {
    /// Applies one batch of link rows as the SQLite store does: per source
    /// only its last record counts; its stored links are compared with the
    /// new ones and, when they differ, deleted and the new ones inserted.
    /// O(link rows of the batch × stored link rows).
    func applyLinks(
        _ rows: RowArena, _ link: LinkSchema, entity: Int, mixedKeys: MixedKeyLog?
    ) throws(StoreError) {
        let sources = BatchRows.linkSources(rows, link, entity: entity, mixedKeys: mixedKeys)
        let width = link.sourceColumns.count
        guard var table = state.tables[link.name] else { throw failure("linking \"\(link.name)\"", "no such table") }
        let dropped = link.rule == .replaceAndDelete ? linkedTargets(rows, link, table) : [:]
        var stillLinked: [[MemoryValue]: Set<MemoryValue>] = [:]
        var stubbed: [String: Set<MemoryValue>] = [:]
        var added = 0
        var removed = 0
        defer {
            sideWrites.linksAdded[link.name, default: 0] += added
            sideWrites.linksRemoved[link.name, default: 0] += removed
        }
        for source in sources {
            let key = sourceKey(rows, source.row, table, width)
            if link.rule == .replaceAndDelete {
                let affinity = table.columns[width].affinity
                stillLinked[key] = Set(source.kept.map { affinity.stored(MemoryValue(rows, rows[$0, width])) })
            }
            var stored: [[MemoryValue]] = []
            if source.unlink {
                stored = table.rows(withPrefix: key).sorted { left, right in
                    let order = MemoryValue.compare(left[width + 1], right[width + 1])
                    guard order == 0 else { return order < 0 }
                    let (first, second) = (table.key(of: left), table.key(of: right))
                    return first.lexicographicallyPrecedes(second) { MemoryValue.compare($0, $1) < 0 }
                }
                if sameLinks(stored, source.kept, rows, link) { continue }
            }
            // A source deleted later in the run keeps no links.
            if deletedByKey.contains(link.sourceTable), !stores(link.sourceTable, key) {
                continue
            }
            if source.unlink && !stored.isEmpty {
                removed += table.removeRows(withPrefix: key)
            }
            for row in source.kept {
                let target = MemoryValue(rows, rows[row, width])
                if link.storedTargetsOnly, !stores(link.targetTable, [target]) { continue }
                var values: [Int: MemoryValue] = [:]
                for column in 0..<link.columnCount { values[column] = MemoryValue(rows, rows[row, column]) }
                switch table.insert(values, orIgnore: true) {
                case .success(let inserted): added += inserted ? 1 : 0
                case .failure(let error): throw failure("linking \"\(link.name)\"", error.message)
                }
                if link.missing == .stub, let (targetTable, targetKey) = self.target(of: row, rows, link),
                    stubbed[targetTable, default: []].insert(target).inserted
                {
                    try stub(targetTable, targetKey, target)
                }
            }
        }
        state.tables[link.name] = table
        if link.rule == .replaceAndDelete { deleteDropped(dropped, stillLinked, link) }
    }

    /// The source key of link row `row`, as the link table stores it.
    private func sourceKey(_ rows: RowArena, _ row: Int, _ table: MemoryTable, _ width: Int) -> [MemoryValue] {
        (0..<width).map { table.columns[$0].affinity.stored(MemoryValue(rows, rows[row, $0])) }
    }

    /// Whether a source's stored links (in position order) are exactly the
    /// rows it keeps: target, position, entity and attributes all equal.
    private func sameLinks(_ stored: [[MemoryValue]], _ kept: [Int], _ rows: RowArena, _ link: LinkSchema) -> Bool {
        guard !stored.isEmpty, stored.count == kept.count else { return false }
        return zip(stored, kept).allSatisfy { stored, row in
            (link.sourceColumns.count..<link.columnCount).allSatisfy { compare(rows, rows[row, $0], stored[$0]) == 0 }
        }
    }

    /// Whether table `name` stores a row with key `key`.
    func stores(_ name: String, _ key: [MemoryValue]) -> Bool {
        guard let table = state.tables[name], table.key.count == key.count else { return false }
        return table.rows[zip(table.key, key).map { table.columns[$0].affinity.stored($1) }] != nil
    }

    /// The target table and key column of link row `row`: the link's own,
    /// or the choice its entity cell names.
    private func target(of row: Int, _ rows: RowArena, _ link: LinkSchema) -> (String, String)? {
        guard !link.choices.isEmpty else { return (link.targetTable, link.targetKey) }
        let value = rows.withText(rows[row, link.sourceColumns.count + 2]) { String(decoding: $0, as: UTF8.self) }
        return link.choices.first { $0.value == value }.map { ($0.table, $0.key) }
    }

    /// The targets linked now from each source of the batch.
    private func linkedTargets(
        _ rows: RowArena, _ link: LinkSchema, _ table: MemoryTable
    ) -> [[MemoryValue]: Set<MemoryValue>] {
        let width = link.sourceColumns.count
        var linked: [[MemoryValue]: Set<MemoryValue>] = [:]
        for source in Set((0..<rows.rowCount).map({ sourceKey(rows, $0, table, width) })) {
            let targets = table.rows(withPrefix: source)
            if !targets.isEmpty { linked[source] = Set(targets.map { $0[width] }) }
        }
        return linked
    }

    /// Deletes the target rows a `replace-and-delete` batch unlinked.
    private func deleteDropped(
        _ before: [[MemoryValue]: Set<MemoryValue>], _ after: [[MemoryValue]: Set<MemoryValue>], _ link: LinkSchema
    ) {
        guard var table = state.tables[link.targetTable], let column = table.column(link.targetKey) else { return }
        for (source, targets) in before {
            guard let now = after[source] else { continue }
            for target in targets.subtracting(now) {
                sideWrites.childrenDeleted[link.targetTable, default: 0] +=
                    table.key == [column]
                    ? (table.replace([table.columns[column].affinity.stored(target)], with: nil) == nil ? 0 : 1)
                    : table.removeAll { MemoryValue.compare($0[column], target) == 0 }
            }
        }
        state.tables[link.targetTable] = table
    }

    /// Creates stub rows for the to-one references of a batch whose
    /// relationship asks for them, once per distinct key.
    func stubReferences(_ rows: RowArena, _ schema: TableSchema) throws(StoreError) {
        for reference in schema.references where reference.missing == .stub {
            var stubbed: Set<MemoryValue> = []
            for row in 0..<rows.rowCount where stubbed.insert(MemoryValue(rows, rows[row, reference.column])).inserted {
                try stub(reference.targetTable, reference.targetKey, MemoryValue(rows, rows[row, reference.column]))
            }
        }
    }

    /// Inserts a row holding only `key` in column `keyColumn` of `table`
    /// unless its key is stored.
    private func stub(_ name: String, _ keyColumn: String, _ key: MemoryValue) throws(StoreError) {
        guard key != .null else { return }
        let action = "creating a stub in \"\(name)\""
        guard let column = state.tables[name]?.column(keyColumn) else {
            throw failure(action, "no column \(keyColumn) in table \(name)")
        }
        // In place: a copy of the table per stub would cost its rows each time.
        switch state.tables[name]?.insert([column: key], orIgnore: true) {
        case .success(let inserted): sideWrites.stubs[name, default: 0] += inserted ? 1 : 0
        case .failure(let error): throw failure(action, error.message)
        case nil: break
        }
    }

    /// Deletes the links from source `key` of each of `links` (by default
    /// the run's) whose source is `table`; counts them as removed.
    func deleteLinks(from table: String, source key: [MemoryValue], in links: [LinkSchema]? = nil) {
        for link in links ?? linkSchemas where link.sourceTable == table {
            guard let columns = state.tables[link.name]?.columns else { continue }
            let values = zip(columns, key).map { $0.affinity.stored($1) }
            // In place: a copy of the table per source would cost its rows each time.
            let removed = state.tables[link.name]?.removeRows(withPrefix: values) ?? 0
            sideWrites.linksRemoved[link.name, default: 0] += removed
        }
    }
}
