@_spi(Machinery) import SluiceRecords

/// Maps each record into its entities' rows; its owner asks ``isFull``
/// after each record and takes the rows as a ``BatchGroup`` with
/// ``cut(checkpoint:rawBytes:records:)``. Memory: one group being filled.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
package final class Batcher: RecordSink {
    let mappers: [RowMapper]
    /// Each entity's derived key column (``CompiledMapping/derivedKeys``)
    /// and key columns, looked up once rather than per record.
    private let derivedKeys: [Int?]
    let keyColumns: [[Int]]
    /// Each mapper's relationships, boxed: reading a `Relation` out of an
    /// array copied it whole (a dozen retains) per record and list item.
    private let relations: [[RelationBox]]
    private let links: [LinkSchema]
    /// Each link table's row shape: cells per row, source key cells, and
    /// where the attribute cells start (read per record; `LinkSchema` is too
    /// big to copy there).
    let linkShapes: [(columns: Int, sourceColumns: Int, firstAttribute: Int)]
    private let limits: BatchLimits
    @exclusivity(unchecked) var arenas: [RowArena?]
    @exclusivity(unchecked) var linkArenas: [RowArena?]
    /// The arenas the consumer of the groups gave back, emptied, which a
    /// table's first rows of a group take before a new arena: a new one
    /// grows from empty, each growth written whole, at every group (the
    /// parse thread's `RowArena.grow`, 26 M instructions of a 20,000-event
    /// first import; docs/performance.md, "Arenas kept across groups").
    package var spares: ArenaPool?
    /// Nested objects deeper than this are an error (trees cannot cycle, but
    /// a hostile document can nest deeply).
    private let maxNesting = 64
    @exclusivity(unchecked) private var rows = 0
    @exclusivity(unchecked) private var bytes = 0
    /// Makes the derived keys of `keyless: create` rows unique to this
    /// batcher (and so to this run).
    private let creationToken = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    /// Rows each entity received as a record of its own (not a deletion),
    /// and as an object nested in another entity's record: the report tells
    /// from them how many records repeated a key.
    @exclusivity(unchecked) package private(set) var recordRows: [Int]
    @exclusivity(unchecked) package private(set) var nestedRows: [Int]
    /// Records each entity skipped (filtered out or missing their key).
    @exclusivity(unchecked) package private(set) var skipped: [Int]
    /// In a run that keeps record digests: each entity's and then each link
    /// table's row count when the current record began
    /// (``markRecord()``), so that its rows can be found after it.
    @exclusivity(unchecked) var rowMarks: [Int] = []
    /// Each entity's and then each link table's: whether its rows contribute
    /// the unit's digest to their keys (``UnitKeys/ownTables(_:)``).
    let ownTables: [Bool]

    /// A batcher writing rows through `compiled`'s mappers and link rows of
    /// its relationships, bounded by `limits`.
    package init(_ compiled: CompiledMapping, limits: BatchLimits) {
        mappers = compiled.mappers
        derivedKeys = compiled.derivedKeys
        keyColumns = mappers.map(\.schema.keyColumns)
        relations = compiled.relations.map { $0.map(RelationBox.init) }
        links = compiled.links
        linkShapes = links.map { ($0.columnCount, $0.sourceColumns.count, $0.firstAttributeCell) }
        ownTables = UnitKeys.ownTables(compiled)
        self.limits = limits
        arenas = Array(repeating: nil, count: mappers.count)
        linkArenas = Array(repeating: nil, count: links.count)
        skipped = Array(repeating: 0, count: mappers.count)
        recordRows = skipped
        nestedRows = skipped
    }

    /// Whether no rows are waiting.
    package var isEmpty: Bool { rows == 0 }

    /// Whether the rows waiting reach ``BatchLimits/maxRows`` or
    /// ``BatchLimits/maxBytes``: the owner should ``cut(checkpoint:rawBytes:records:)``
    /// them before the next record. O(1).
    package var isFull: Bool { rows >= limits.maxRows || bytes >= limits.maxBytes }

    package func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        for entity in entities {
            if deleting.contains(entity) || mappers[entity].deletes(tree, root: 0) {
                try appendDeletion(entity, tree, ordinal: ordinal)
            } else {
                _ = try append(entity, tree, root: 0, ordinal: ordinal, depth: 0)
            }
        }
    }

    /// Appends a deletion of the record's key to `entity`'s rows; its
    /// relationships are not followed (the store removes its links).
    private func appendDeletion(_ entity: Int, _ tree: RecordTree, ordinal: Int) throws {
        var arena = take(entity)
        let before = arena.byteSize
        let outcome: RowOutcome
        do { outcome = try mappers[entity].appendDeletion(tree, root: 0, ordinal: ordinal, into: &arena) } catch {
            // The rows before stay: a failed run commits them (``dropRows(from:)``).
            arenas[entity] = arena
            throw error
        }
        bytes += arena.byteSize - before
        arenas[entity] = arena
        if outcome == .appended { rows += 1 } else { skipped[entity] += 1 }
    }

    /// Maps the object at `root` into `entity`'s rows, then follows its
    /// relationships: nested objects are found or created in their target
    /// entity, to-many lists become link rows. Returns the row's key cell in
    /// its arena (when it has a single key), or `nil` if the record was skipped.
    private func append(
        _ entity: Int, _ tree: RecordTree, root: Int32, ordinal: Int, depth: Int, derivedKey: [UInt8]? = nil
    ) throws -> Cell? {
        // The row's key cells, which its relationships' rows copy, on the
        // stack: an array of them was an allocation a record.
        let keys = relations[entity].isEmpty ? 0 : keyColumns[entity].count
        return try withUnsafeTemporaryAllocation(of: Cell.self, capacity: keys) { sourceKey in
            try append(
                entity, tree, root: root, ordinal: ordinal, depth: depth, derivedKey: derivedKey, keys: sourceKey)
        }
    }

    /// ``append(_:_:root:ordinal:depth:derivedKey:)`` with room for the
    /// row's key cells in `sourceKey` (uninitialized, one per key column
    /// when the entity has relationships).
    private func append(
        _ entity: Int, _ tree: RecordTree, root: Int32, ordinal: Int, depth: Int, derivedKey: [UInt8]?,
        keys sourceKey: UnsafeMutableBufferPointer<Cell>
    ) throws -> Cell? {
        let mapper = mappers[entity]
        var arena = take(entity)
        let before = arena.byteSize
        let outcome: RowOutcome
        do { outcome = try mapper.appendRow(tree, root: root, ordinal: ordinal, into: &arena) } catch {
            arenas[entity] = arena
            throw error
        }
        if let derivedKey, outcome == .appended, let column = derivedKeys[entity] {
            arena.set(column, arena.text(derivedKey))
        }
        bytes += arena.byteSize - before
        let row = arena.rowCount - 1
        let keyCell = outcome == .appended && keyColumns[entity].count == 1 ? arena[row, keyColumns[entity][0]] : nil
        if outcome == .appended && !relations[entity].isEmpty {
            for (index, column) in keyColumns[entity].enumerated() {
                sourceKey.initializeElement(at: index, to: arena[row, column])
            }
        }
        arenas[entity] = arena
        guard outcome == .appended else {
            skipped[entity] += 1
            return nil
        }
        rows += 1
        if depth == 0 { recordRows[entity] += 1 } else { nestedRows[entity] += 1 }
        guard !relations[entity].isEmpty else { return keyCell }
        guard depth < maxNesting else {
            throw RecordError(
                entity: mapper.schema.name, attribute: nil, message: "nested objects deeper than \(maxNesting) levels")
        }
        let source = UnsafeBufferPointer(sourceKey)
        for index in relations[entity].indices {
            let box = relations[entity][index]
            if let link = box.link {
                try appendLinks(
                    link, entity, index, tree, root: root, sourceKey: source, ordinal: ordinal, depth: depth)
            } else if let node = tree.resolve(box.relation.source, from: root) {
                try appendNested(
                    entity, index, tree, node: node, row: row, sourceKey: source, ordinal: ordinal, depth: depth)
            }
        }
        return keyCell
    }

    /// Finds or creates the nested object at `node` of `entity`'s row `row`
    /// through its relationship `index`; a null under a `keyless` rule
    /// clears the reference.
    private func appendNested(
        _ entity: Int, _ index: Int, _ tree: RecordTree, node: Int32, row: Int, sourceKey: UnsafeBufferPointer<Cell>,
        ordinal: Int,
        depth: Int
    ) throws {
        let box = relations[entity][index]
        guard Self.isObject(tree, node) else {
            if box.relation.keyless != nil, tree.nodes[Int(node)].kind == .null,
                let column = box.relation.referenceColumn
            {
                arenas[entity]?.set(row: row, column, .null)
            }
            return
        }
        let derived = box.relation.keyless.map {
            makeDerivedKey($0, box.relation, parent: (entity, sourceKey), ordinal: ordinal, node: node, position: nil)
        }
        let childKey = try append(
            box.relation.target, tree, root: node, ordinal: ordinal, depth: depth + 1, derivedKey: derived)
        if let derived, childKey != nil, let column = box.relation.referenceColumn, var parent = arenas[entity] {
            arenas[entity] = nil
            let before = parent.byteSize
            parent.set(row: row, column, parent.text(derived))
            bytes += parent.byteSize - before
            arenas[entity] = parent
        }
    }

    /// The key of a nested object of an entity without a key: under `reuse`
    /// the parent's entity and key, the relationship and the list position
    /// (so the same parent reaches the same row again); under `create`, or
    /// for a parent without a key, unique to this batcher, record and node.
    private func makeDerivedKey(
        _ rule: KeylessRule, _ relation: Relation, parent: (entity: Int, key: UnsafeBufferPointer<Cell>), ordinal: Int,
        node: Int32,
        position: Int?
    ) -> [UInt8] {
        var text: [UInt8] = []
        if rule == .reuse && !parent.key.isEmpty, let arena = arenas[parent.entity] {
            text += mappers[parent.entity].schema.name.utf8
            for (index, cell) in parent.key.enumerated() {
                text.append(index == 0 ? UInt8(ascii: ":") : 0x1F)
                switch cell {
                case .integer(let value): text += String(value).utf8
                case .real(let value): text += String(value).utf8
                // A key is never spilled (RowMapper).
                case .text, .blob, .spilledText, .spilledBlob: arena.withText(cell) { text += $0 }
                case .absent, .null: break
                }
            }
            text += "/\(relation.name)".utf8
            if let position { text += "#\(position)".utf8 }
        } else {
            text += "\(creationToken):\(ordinal):\(node)".utf8
        }
        return text
    }

    /// Appends the link rows of one record's list (relationship `index` of
    /// `entity`): source key, target key, position; an empty list leaves one
    /// marker row (no target) that clears the record's links. Listed objects
    /// are found or created first. The list is walked in place, twice,
    /// rather than collected.
    private func appendLinks(
        _ link: Int, _ entity: Int, _ index: Int, _ tree: RecordTree, root: Int32,
        sourceKey: UnsafeBufferPointer<Cell>, ordinal: Int,
        depth: Int
    ) throws {
        let box = relations[entity][index]
        let readsItemKeys = box.readsItemKeys
        let target = box.relation.target
        // The keys of listed objects, in list order (empty, so unallocated,
        // for lists of keys).
        var nestedKeys: [Cell] = []
        var count = 0
        let present = try tree.forEachGathered(box.relation.source, from: root) { item in
            count += 1
            if !readsItemKeys && Self.isObject(tree, item) {
                let derived = box.relation.keyless.map {
                    makeDerivedKey(
                        $0, box.relation, parent: (entity, sourceKey), ordinal: ordinal, node: item, position: count - 1
                    )
                }
                // A skipped target links nothing (.null is dropped below).
                let key = try append(target, tree, root: item, ordinal: ordinal, depth: depth + 1, derivedKey: derived)
                nestedKeys.append(key ?? .null)
            } else if box.relation.keyless != nil {
                throw RecordError(
                    entity: links[link].sourceTable, attribute: links[link].name,
                    message:
                        "`\(box.relation.name)` lists objects of an entity without a key, and item \(count) is not an object"
                )
            }
        }
        guard present else { return }
        let shape = linkShapes[link]
        var arena =
            linkArenas[link].take() ?? spares?.take(columnCount: shape.columns) ?? RowArena(columnCount: shape.columns)
        let before = arena.byteSize
        defer {
            bytes += arena.byteSize - before
            linkArenas[link] = arena
        }
        let sourceCells = arenas[entity] ?? RowArena(columnCount: 0)
        if count == 0 {
            Self.beginLinkRow(&arena, ordinal: ordinal, source: sourceKey, from: sourceCells)
            return
        }
        var position = 0
        var nested = 0
        try tree.forEachGathered(box.relation.source, from: root) { item in
            defer { position += 1 }
            let cell: Cell
            var entityValue: [UInt8]?
            var attributes: [Cell] = []
            if !readsItemKeys && Self.isObject(tree, item) {
                cell = arena.copy(nestedKeys[nested], from: arenas[target] ?? RowArena(columnCount: 0))
                nested += 1
            } else if readsItemKeys {
                do {
                    (cell, entityValue) = try box.relation.itemTarget(tree, item, into: &arena).get()
                    attributes = try box.relation.itemAttributes(tree, item, into: &arena).get()
                } catch {
                    throw RecordError(
                        entity: links[link].sourceTable, attribute: links[link].name,
                        message: "item \(position + 1): \(error)")
                }
                if cell == .absent || cell == .null {
                    throw RecordError(
                        entity: links[link].sourceTable, attribute: links[link].name,
                        message: "item \(position + 1) has no target key")
                }
            } else {
                switch box.relation.keyCell(tree, item, into: &arena) {
                case .success(let converted): cell = converted
                case .failure(let problem):
                    throw RecordError(
                        entity: links[link].sourceTable, attribute: links[link].name, message: problem.description)
                }
            }
            switch cell {
            case .absent, .null: return
            default: break
            }
            Self.beginLinkRow(&arena, ordinal: ordinal, source: sourceKey, from: sourceCells)
            arena.set(shape.sourceColumns, cell)
            arena.set(shape.sourceColumns + 1, .integer(Int64(position)))
            if let entityValue { arena.set(shape.sourceColumns + 2, arena.text(entityValue)) }
            for (offset, attribute) in attributes.enumerated() { arena.set(shape.firstAttribute + offset, attribute) }
            rows += 1
        }
    }

    /// Starts a link row of record `ordinal` holding the source's key cells
    /// (copied from `sourceCells`); static, so no closure captures the arena
    /// being built.
    private static func beginLinkRow(
        _ arena: inout RowArena, ordinal: Int, source: UnsafeBufferPointer<Cell>, from sourceCells: RowArena
    ) {
        arena.beginRow(ordinal: ordinal)
        for (column, cell) in source.enumerated() { arena.set(column, arena.copy(cell, from: sourceCells)) }
    }

    private func take(_ entity: Int) -> RowArena {
        // Moved out rather than copied: a copy retained and released the
        // arena's three buffers per record.
        arenas[entity].take() ?? newArena(entity)
    }

    /// An arena for `entity`'s first rows of a group: a spare, or a new
    /// one. Apart from ``take(_:)``, whose every call would read the schema
    /// (a copy of it, retains and releases: 11 M instructions of a
    /// 20,000-event first import).
    private func newArena(_ entity: Int) -> RowArena {
        let columns = mappers[entity].schema.columns.count
        return spares?.take(columnCount: columns) ?? RowArena(columnCount: columns)
    }

    /// Whether `node` is a nested object (an XML element with attributes or
    /// child elements, or a JSON object) rather than a key.
    private static func isObject(_ tree: RecordTree, _ node: Int32) -> Bool {
        switch tree.nodes[Int(node)].kind {
        case .object: return true
        case .element: return tree.nodes[Int(node)].firstChild >= 0
        default: return false
        }
    }

    /// Drops the rows of record `ordinal` and of any after it: a record
    /// whose mapping failed part way leaves some of its rows behind, and a
    /// failed run commits only the records before the one that failed
    /// (``ParseSide/handOverRecords(before:)``). The rows of a record are
    /// the last of each table's. O(rows dropped).
    package func dropRows(from ordinal: Int) {
        func dropping(_ arena: RowArena?) -> RowArena? {
            guard var arena else { return nil }
            while let last = arena.ordinals.last, last >= ordinal {
                arena.abandonRow()
                rows -= 1
            }
            return arena
        }
        arenas = arenas.map(dropping)
        linkArenas = linkArenas.map(dropping)
    }

    /// Takes the rows gathered so far as a group with `checkpoint`, leaving
    /// the batcher empty. O(entities).
    package func cut(checkpoint: Checkpoint, rawBytes: Int64, records: Int) -> BatchGroup {
        var batches: [Batch] = []
        for (entity, arena) in arenas.enumerated() {
            guard let arena, arena.rowCount > 0 else { continue }
            batches.append(Batch(entity: entity, schema: mappers[entity].schema, rows: arena))
        }
        for (index, arena) in linkArenas.enumerated() {
            guard let arena, arena.rowCount > 0 else { continue }
            let source = mappers.firstIndex { $0.schema.name == links[index].sourceTable } ?? 0
            batches.append(Batch(entity: source, schema: mappers[source].schema, rows: arena, link: links[index]))
        }
        arenas = Array(repeating: nil, count: mappers.count)
        linkArenas = Array(repeating: nil, count: links.count)
        rows = 0
        bytes = 0
        return BatchGroup(batches: batches, checkpoint: checkpoint, rawBytes: rawBytes, records: records)
    }
}

/// One relationship behind a reference, so the batcher reads it in place,
/// with what every record reads of it held apart: a property of `Relation`
/// read from this module copied the whole struct (370 instructions a
/// record, callgrind).
private final class RelationBox {
    let relation: Relation
    let link: Int?
    let readsItemKeys: Bool
    init(_ relation: Relation) {
        self.relation = relation
        link = relation.link
        readsItemKeys = relation.readsItemKeys
    }
}
