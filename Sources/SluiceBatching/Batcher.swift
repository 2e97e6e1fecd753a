import SluiceRecords

/// Maps each record into its entities' rows and cuts a ``BatchGroup`` when
/// the rows or bytes reach the limits. Memory: one group being filled.
public final class Batcher: RecordSink {
    private let mappers: [RowMapper]
    private let links: [LinkSchema]
    private let limits: BatchLimits
    private var arenas: [RowArena?]
    private var linkArenas: [RowArena?]
    /// Nested objects deeper than this are an error (trees cannot cycle, but
    /// a hostile document can nest deeply).
    private let maxNesting = 64
    private var rows = 0
    private var bytes = 0
    /// Records each entity skipped (filtered out or missing their key).
    public private(set) var skipped: [Int]

    /// Called with every full group; it may block (back-pressure) or throw
    /// (the store failed), which stops the parse.
    public var onFull: (Batcher) throws -> Void = { _ in }

    /// A batcher writing rows through `mappers` and link rows of `links`,
    /// bounded by `limits`.
    public init(mappers: [RowMapper], links: [LinkSchema] = [], limits: BatchLimits) {
        self.mappers = mappers
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
    private func append(_ entity: Int, _ tree: RecordTree, root: Int32, ordinal: Int, depth: Int) throws -> Cell? {
        let mapper = mappers[entity]
        var arena = take(entity)
        let before = arena.byteSize
        let outcome = try mapper.appendRow(tree, root: root, ordinal: ordinal, into: &arena)
        bytes += arena.byteSize - before
        let keyColumns = mapper.schema.keyColumns
        let sourceKey = outcome == .appended ? keyColumns.map { arena[arena.rowCount - 1, $0] } : []
        let keyCell = keyColumns.count == 1 ? sourceKey.first : nil
        arenas[entity] = arena
        guard outcome == .appended else {
            skipped[entity] += 1
            return nil
        }
        rows += 1
        guard let entityMapper = mapper as? EntityMapper, !entityMapper.relations.isEmpty else { return keyCell }
        guard depth < maxNesting else {
            throw RecordError(entity: mapper.schema.name, attribute: nil, message: "nested objects deeper than \(maxNesting) levels")
        }
        for relation in entityMapper.relations {
            if let link = relation.link {
                guard let items = tree.resolveAll(relation.source, from: root) else { continue }
                try appendLinks(link, relation, tree, items, source: sourceKey, sourceArena: entity, ordinal: ordinal, depth: depth)
            } else if let node = tree.resolve(relation.source, from: root), Self.isObject(tree, node) {
                _ = try append(relation.target, tree, root: node, ordinal: ordinal, depth: depth + 1)
            }
        }
        return keyCell
    }

    /// Appends the link rows of one record's list: source key, target key,
    /// position; an empty list leaves one marker row (no target) that clears
    /// the record's links.
    private func appendLinks(
        _ link: Int, _ relation: Relation, _ tree: RecordTree, _ items: [Int32], source: [Cell], sourceArena: Int,
        ordinal: Int, depth: Int
    ) throws {
        let schema = links[link]
        var targets: [(cell: Cell, arena: Int?)] = []
        for item in items {
            if Self.isObject(tree, item) {
                // A skipped or keyless target links nothing (.null is dropped below).
                let key = try append(relation.target, tree, root: item, ordinal: ordinal, depth: depth + 1)
                targets.append((key ?? .null, relation.target))
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
        func beginRow() {
            arena.beginRow(ordinal: ordinal)
            let sourceCells = arenas[sourceArena] ?? RowArena(columnCount: 0)
            for (column, cell) in source.enumerated() { arena.set(column, arena.copy(cell, from: sourceCells)) }
        }
        if items.isEmpty {
            beginRow()
            return
        }
        for (position, item) in items.enumerated() {
            let target = targets[position]
            let cell: Cell
            if let targetArena = target.arena {
                cell = arena.copy(target.cell, from: arenas[targetArena] ?? RowArena(columnCount: 0))
            } else {
                switch relation.keyCell(tree, item, into: &arena) {
                case .success(let converted): cell = converted
                case .failure(let problem):
                    throw RecordError(entity: schema.sourceTable, attribute: schema.name, message: problem.description)
                }
            }
            guard cell != .absent && cell != .null else { continue }
            beginRow()
            arena.set(schema.sourceColumns.count, cell)
            arena.set(schema.sourceColumns.count + 1, .integer(Int64(position)))
            rows += 1
        }
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
