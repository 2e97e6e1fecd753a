import SluiceRecords

/// Maps each record into its entities' rows and cuts a ``BatchGroup`` when
/// the rows or bytes reach the limits. Memory: one group being filled.
public final class Batcher: RecordSink {
    private let mappers: [RowMapper]
    private let limits: BatchLimits
    private var arenas: [RowArena?]
    private var rows = 0
    private var bytes = 0
    /// Records each entity skipped (filtered out or missing their key).
    public private(set) var skipped: [Int]

    /// Called with every full group; it may block (back-pressure) or throw
    /// (the store failed), which stops the parse.
    public var onFull: (Batcher) throws -> Void = { _ in }

    /// A batcher writing rows through `mappers`, bounded by `limits`.
    public init(mappers: [RowMapper], limits: BatchLimits) {
        self.mappers = mappers
        self.limits = limits
        arenas = Array(repeating: nil, count: mappers.count)
        skipped = Array(repeating: 0, count: mappers.count)
    }

    /// Whether no rows are waiting.
    public var isEmpty: Bool { rows == 0 }

    public func record(_ tree: RecordTree, entities: [Int], ordinal: Int) throws {
        for entity in entities {
            let mapper = mappers[entity]
            var arena = arenas[entity] ?? RowArena(columnCount: mapper.schema.columns.count)
            arenas[entity] = nil
            let before = arena.byteSize
            defer { arenas[entity] = arena }
            guard try mapper.appendRow(tree, ordinal: ordinal, into: &arena) == .appended else {
                skipped[entity] += 1
                continue
            }
            rows += 1
            bytes += arena.byteSize - before
        }
        if rows >= limits.maxRows || bytes >= limits.maxBytes { try onFull(self) }
    }

    /// Takes the rows gathered so far as a group with `checkpoint`, leaving
    /// the batcher empty. O(entities).
    public func cut(checkpoint: Checkpoint, rawBytes: Int64, records: Int) -> BatchGroup {
        var batches: [Batch] = []
        for (entity, arena) in arenas.enumerated() {
            guard let arena, arena.rowCount > 0 else { continue }
            batches.append(Batch(entity: entity, schema: mappers[entity].schema, rows: arena))
        }
        arenas = Array(repeating: nil, count: mappers.count)
        rows = 0
        bytes = 0
        return BatchGroup(batches: batches, checkpoint: checkpoint, rawBytes: rawBytes, records: records)
    }
}
