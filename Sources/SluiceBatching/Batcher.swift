import SluiceRecords

/// Maps each record into its entities' rows and cuts a ``BatchGroup`` when
/// the rows or bytes reach the limits. Memory: one group being filled.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
public final class Batcher: RecordSink {
    private let mappers: [RowMapper]
    /// Each mapper as an ``EntityMapper`` (nil for others), and its key
    /// columns, looked up once rather than per record.
    private let entityMappers: [EntityMapper?]
    private let keyColumns: [[Int]]
    private let links: [LinkSchema]
    private let limits: BatchLimits
    @exclusivity(unchecked) private var arenas: [RowArena?]
    @exclusivity(unchecked) private var linkArenas: [RowArena?]
    /// Nested objects deeper than this are an error (trees cannot cycle, but
    /// a hostile document can nest deeply).
    private let maxNesting = 64
    @exclusivity(unchecked) private var rows = 0
    @exclusivity(unchecked) private var bytes = 0
    /// Makes the derived keys of `keyless: create` rows unique to this
    /// batcher (and so to this run).
    private let creationToken = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    /// Records each entity skipped (filtered out or missing their key).
    @exclusivity(unchecked) public private(set) var skipped: [Int]

    /// Called with every full group; it may block (back-pressure) or throw
    /// (the store failed), which stops the parse.
    public var onFull: (Batcher) throws -> Void = { _ in }

    /// A batcher writing rows through `mappers` and link rows of `links`,
    /// bounded by `limits`.
    public init(mappers: [RowMapper], links: [LinkSchema] = [], limits: BatchLimits) {
        self.mappers = mappers
        entityMappers = mappers.map { $0 as? EntityMapper }
        keyColumns = mappers.map(\.schema.keyColumns)
        self.links = links
        self.limits = limits
        arenas = Array(repeating: nil, count: mappers.count)
        linkArenas = Array(repeating: nil, count: links.count)
        skipped = Array(repeating: 0, count: mappers.count)
    }

    /// Whether no rows are waiting.
    public var isEmpty: Bool { rows == 0 }

    public func record(_ tree: RecordTree, entities: [Int], ordinal: Int) throws {
        for entity in entities { _ = try append(entity, tree, root: 0, ordinal: ordinal, depth: 0) }
        if rows >= limits.maxRows || bytes >= limits.maxBytes { try onFull(self) }
    }

    /// Maps the object at `root` into `entity`'s rows, then follows its
    /// relationships: nested objects are found or created in their target
    /// entity, to-many lists become link rows. Returns the row's key cell in
    /// its arena (when it has a single key), or `nil` if the record was skipped.
    private func append(
        _ entity: Int, _ tree: RecordTree, root: Int32, ordinal: Int, depth: Int, derivedKey: [UInt8]? = nil
    ) throws -> Cell? {
        let mapper = mappers[entity]
        var arena = take(entity)
        let before = arena.byteSize
        let outcome = try mapper.appendRow(tree, root: root, ordinal: ordinal, into: &arena)
        let entityMapper = entityMappers[entity]
        if let derivedKey, outcome == .appended, let column = entityMapper?.derivedKey {
            arena.set(column, arena.text(derivedKey))
        }
        bytes += arena.byteSize - before
        let row = arena.rowCount - 1
        let keyColumns = keyColumns[entity]
        let sourceKey = outcome == .appended ? keyColumns.map { arena[row, $0] } : []
        let keyCell = keyColumns.count == 1 ? sourceKey.first : nil
        arenas[entity] = arena
        guard outcome == .appended else {
            skipped[entity] += 1
            return nil
        }
        rows += 1
        guard let entityMapper, !entityMapper.relations.isEmpty else { return keyCell }
        guard depth < maxNesting else {
            throw RecordError(entity: mapper.schema.name, attribute: nil, message: "nested objects deeper than \(maxNesting) levels")
        }
        for relation in entityMapper.relations {
            if let link = relation.link {
                guard let items = tree.resolveAll(relation.source, from: root) else { continue }
                try appendLinks(link, relation, tree, items, source: (entity, sourceKey), ordinal: ordinal, depth: depth)
            } else if let node = tree.resolve(relation.source, from: root) {
                guard Self.isObject(tree, node) else {
                    if relation.keyless != nil, tree.nodes[Int(node)].kind == .null, let column = relation.referenceColumn {
                        arenas[entity]?.set(row: row, column, .null)
                    }
                    continue
                }
                let derived = relation.keyless.map { makeDerivedKey($0, relation, parent: (entity, sourceKey), ordinal: ordinal, node: node, position: nil) }
                let childKey = try append(relation.target, tree, root: node, ordinal: ordinal, depth: depth + 1, derivedKey: derived)
                if let derived, childKey != nil, let column = relation.referenceColumn, var parent = arenas[entity] {
                    arenas[entity] = nil
                    let before = parent.byteSize
                    parent.set(row: row, column, parent.text(derived))
                    bytes += parent.byteSize - before
                    arenas[entity] = parent
                }
            }
        }
        return keyCell
    }

    /// The key of a nested object of an entity without a key: under `reuse`
    /// the parent's entity and key, the relationship and the list position
    /// (so the same parent reaches the same row again); under `create`, or
    /// for a parent without a key, unique to this batcher, record and node.
    private func makeDerivedKey(
        _ rule: KeylessRule, _ relation: Relation, parent: (entity: Int, key: [Cell]), ordinal: Int, node: Int32, position: Int?
    ) -> [UInt8] {
        var text: [UInt8] = []
        if rule == .reuse && !parent.key.isEmpty, let arena = arenas[parent.entity] {
            text += mappers[parent.entity].schema.name.utf8
            for (index, cell) in parent.key.enumerated() {
                text.append(index == 0 ? UInt8(ascii: ":") : 0x1F)
                switch cell {
                case .integer(let value): text += String(value).utf8
                case .real(let value): text += String(value).utf8
                case .text, .blob: arena.withText(cell) { text += $0 }
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

    /// Appends the link rows of one record's list: source key, target key,
    /// position; an empty list leaves one marker row (no target) that clears
    /// the record's links.
    private func appendLinks(
        _ link: Int, _ relation: Relation, _ tree: RecordTree, _ items: [Int32], source: (entity: Int, key: [Cell]),
        ordinal: Int, depth: Int
    ) throws {
        let schema = links[link]
        var targets: [(cell: Cell, arena: Int?)] = []
        for (position, item) in items.enumerated() {
            if !relation.readsItemKeys && Self.isObject(tree, item) {
                let derived = relation.keyless.map { makeDerivedKey($0, relation, parent: source, ordinal: ordinal, node: item, position: position) }
                // A skipped target links nothing (.null is dropped below).
                let key = try append(relation.target, tree, root: item, ordinal: ordinal, depth: depth + 1, derivedKey: derived)
                targets.append((key ?? .null, relation.target))
            } else if relation.keyless != nil {
                throw RecordError(entity: schema.sourceTable, attribute: schema.name, message: "`\(relation.name)` lists objects of an entity without a key, and item \(position + 1) is not an object")
            } else {
                targets.append((.absent, nil))
            }
        }
        var arena = linkArenas[link] ?? RowArena(columnCount: schema.columnCount)
        linkArenas[link] = nil
        let before = arena.byteSize
        defer {
            bytes += arena.byteSize - before
            linkArenas[link] = arena
        }
        let sourceCells = arenas[source.entity] ?? RowArena(columnCount: 0)
        if items.isEmpty {
            Self.beginLinkRow(&arena, ordinal: ordinal, source: source.key, from: sourceCells)
            return
        }
        for (position, item) in items.enumerated() {
            let target = targets[position]
            let cell: Cell
            var entity: [UInt8]?
            var attributes: [Cell] = []
            if let targetArena = target.arena {
                cell = arena.copy(target.cell, from: arenas[targetArena] ?? RowArena(columnCount: 0))
            } else if relation.readsItemKeys {
                do {
                    (cell, entity) = try relation.itemTarget(tree, item, into: &arena).get()
                    attributes = try relation.itemAttributes(tree, item, into: &arena).get()
                } catch {
                    throw RecordError(entity: schema.sourceTable, attribute: schema.name, message: "item \(position + 1): \(error)")
                }
                if cell == .absent || cell == .null {
                    throw RecordError(entity: schema.sourceTable, attribute: schema.name, message: "item \(position + 1) has no target key")
                }
            } else {
                switch relation.keyCell(tree, item, into: &arena) {
                case .success(let converted): cell = converted
                case .failure(let problem):
                    throw RecordError(entity: schema.sourceTable, attribute: schema.name, message: problem.description)
                }
            }
            guard cell != .absent && cell != .null else { continue }
            Self.beginLinkRow(&arena, ordinal: ordinal, source: source.key, from: sourceCells)
            arena.set(schema.sourceColumns.count, cell)
            arena.set(schema.sourceColumns.count + 1, .integer(Int64(position)))
            if let entity { arena.set(schema.sourceColumns.count + 2, arena.text(entity)) }
            for (index, attribute) in attributes.enumerated() { arena.set(schema.firstAttributeCell + index, attribute) }
            rows += 1
        }
    }

    /// Starts a link row of record `ordinal` holding the source's key cells
    /// (copied from `sourceCells`); static, so no closure captures the arena
    /// being built.
    private static func beginLinkRow(_ arena: inout RowArena, ordinal: Int, source: [Cell], from sourceCells: RowArena) {
        arena.beginRow(ordinal: ordinal)
        for (column, cell) in source.enumerated() { arena.set(column, arena.copy(cell, from: sourceCells)) }
    }

    private func take(_ entity: Int) -> RowArena {
        let arena = arenas[entity] ?? RowArena(columnCount: mappers[entity].schema.columns.count)
        arenas[entity] = nil
        return arena
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

    /// Takes the rows gathered so far as a group with `checkpoint`, leaving
    /// the batcher empty. O(entities).
    public func cut(checkpoint: Checkpoint, rawBytes: Int64, records: Int) -> BatchGroup {
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
