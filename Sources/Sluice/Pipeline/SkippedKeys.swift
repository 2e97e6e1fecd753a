import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// In a run that skips units and sweeps with delete-missing, the keys of the
/// units it skips, which a full run would have written: recorded as seen
/// (``ImportStore/markSeen(_:of:)``) in the entities whose keys the store
/// tracks (``SeenKeys/tracked(_:)``), so that the sweep deletes what a full
/// run's would. Fed by ``SkipPlan``'s join, which meets every kept unit in
/// digest order: no second scan of the units. Memory: ``rowsPerWrite`` keys
/// per entity, each held in its key columns only (an integer key: 16 bytes
/// of cell; a row as wide as the table held 24 MiB at 2,000,000 events);
/// cost: one decode and one insert into the seen-keys table's primary key
/// per key.
final class SkippedKeys {
    /// Keys gathered per entity before they are written, in one transaction
    /// (each transaction writes most pages of the seen-keys table once:
    /// fewer, larger ones write fewer pages; 100,000 integer keys hold about
    /// 3 MB).
    static let rowsPerWrite = 100_000

    private let store: any ImportStore
    private let schemas: [TableSchema]
    /// Per entity: the keys not written yet, one column per key column, nil
    /// when its keys are not tracked.
    private var pending: [RowArena?]
    /// Per entity: the arena columns ``UnitKeys/appendKeyRow(_:columns:to:)``
    /// fills, one per key column.
    private let keyPositions: [[Int]]
    /// Per entity: whether its keys are tracked (``pending`` is not nil), a
    /// constant read once a key without the property's exclusivity check
    /// (45 M instructions of the 200,000-event next day's join).
    private let tracked: [Bool]
    /// Keys recorded so far, every entity.
    private(set) var recorded = 0

    /// Gathers the keys of the tracked entities among `entities` (per
    /// entity: whether to gather its keys); nil when there is none (a run
    /// that does not sweep, or sweeps only in proportion to the change).
    init?(store: any ImportStore, compiled: CompiledMapping, among entities: [Bool]) {
        schemas = compiled.mappers.map(\.schema)
        let tracked = zip(SeenKeys.tracked(schemas), entities).map { $0 && $1 }
        guard tracked.contains(true) else { return nil }
        self.store = store
        keyPositions = schemas.map { Array($0.keyColumns.indices) }
        pending = zip(schemas, tracked).map { $1 ? RowArena(columnCount: $0.keyColumns.count) : nil }
        self.tracked = tracked
    }

    /// Gathers the keys of a skipped unit's entries (``UnitKeys``) in tracked
    /// entities, writing an entity's once ``rowsPerWrite`` are gathered.
    /// False when the entries do not read (a store written by something
    /// else): the run parses the unit instead, which records its keys. A
    /// unit with no key of a tracked entity is read once, in place (its keys
    /// decoded twice into arrays cost 815 M of the 10,013 M instructions of
    /// the 200,000-event next day, callgrind, where only Tag is tracked).
    func add(_ unit: StoredUnit) throws(StoreError) -> Bool {
        let tracked = self.tracked
        var any = false
        let readable = UnitKeys.forEachKey(unit.keys, digest: unit.digest) { table, _, _ in
            if table < tracked.count && tracked[table] { any = true }
        }
        guard readable else { return false }
        guard any else { return true }
        return try gather(unit)
    }

    /// Gathers the keys of `unit`'s entries in tracked entities.
    private func gather(_ unit: StoredUnit) throws(StoreError) -> Bool {
        var readable = true
        _ = UnitKeys.forEach(unit.keys, digest: unit.digest) { entry in
            guard entry.table < pending.count, pending[entry.table] != nil else { return }
            readable =
                UnitKeys.appendKeyRow(entry.key, columns: keyPositions[entry.table], to: &pending[entry.table]!)
                && readable
        }
        for entity in pending.indices where (pending[entity]?.rowCount ?? 0) >= Self.rowsPerWrite {
            try write(entity)
        }
        return readable
    }

    /// Writes the keys still gathered.
    func finish() throws(StoreError) {
        for entity in pending.indices { try write(entity) }
    }

    private func write(_ entity: Int) throws(StoreError) {
        guard let keys = pending[entity], keys.rowCount > 0 else { return }
        try store.markSeen(keys, of: schemas[entity])
        recorded += keys.rowCount
        pending[entity]?.removeAll()
    }
}
