import SluiceBatching
import SluiceRecords
import SluiceStore

/// Counts an entity's dangling references on a thread of its own as soon as
/// the key-ordered apply has finished the entity and every table its
/// references point to, while the store thread writes the tables after them
/// (link tables, the longest). Only entities nothing later in the run can
/// change are counted early: with delete-missing, a `replace-and-delete`
/// link or a stub-creating relationship of another entity aimed at one of
/// their targets, the count waits for the end of the run as before. On the
/// 1 GB events benchmark this takes the 2 s scan of the Event table off the
/// end of the run.
///
/// Memory: one read-only connection (2 MiB page cache) and a thread.
final class EarlyReferenceCounts {
    private let pending: BlockingQueue<TableSchema>
    private var worker: Worker?
    private let counter: any ReferenceCounter
    /// Written by the worker, read after it is joined.
    private var counted: [String: [DanglingCount]] = [:]
    private var failure: StoreError?
    /// Entities to count early, with the tables each waits for.
    private var waiting: [(schema: TableSchema, tables: Set<String>)]
    private var finished: Set<String>

    /// Prepares early counts for the schemas of `compiled` that allow them
    /// and have a reference whose count the store does not keep (`kept`,
    /// names as ``DanglingRelation/name``), given the tables the apply will
    /// write (`applied`, the rest are final already); nil when none does or
    /// the store offers no counter of its own (the counts then all come at
    /// the end).
    init?(
        store: any ImportStore, compiled: CompiledMapping, deleteMissing: Bool, applied: [String], kept: Set<String>
    ) {
        let schemas = compiled.mappers.map(\.schema)
        guard !deleteMissing, !compiled.links.contains(where: { $0.rule == .replaceAndDelete }) else { return nil }
        var candidates: [(schema: TableSchema, tables: Set<String>)] = []
        for schema in schemas
        where schema.references.contains(where: { !kept.contains(DanglingRelation.reference(schema, $0).name) }) {
            let targets = Set(schema.references.map(\.targetTable))
            let stubbedByOthers = schemas.contains { other in
                other.name != schema.name
                    && other.references.contains { $0.missing == .stub && targets.contains($0.targetTable) }
            }
            let stubbedByLinks = compiled.links.contains { link in
                link.missing == .stub
                    && (targets.contains(link.targetTable) || link.choices.contains { targets.contains($0.table) })
            }
            if !stubbedByOthers && !stubbedByLinks { candidates.append((schema, targets.union([schema.name]))) }
        }
        guard !candidates.isEmpty, let counter = store.makeReferenceCounter() else { return nil }
        self.counter = counter
        waiting = candidates
        finished = Set(schemas.map(\.name)).subtracting(applied)
        let pending = BlockingQueue<TableSchema>(capacity: candidates.count)
        self.pending = pending
        // Without a thread the counts are taken after the apply, as without this.
        guard
            let worker = try? Worker({ [unowned self] in
                while let schema = pending.pop() {
                    do throws(StoreError) {
                        counted[schema.name] = try counter.references(of: schema)
                    } catch {
                        failure = error
                        return
                    }
                }
            })
        else { return nil }
        self.worker = worker
        startReady()
    }

    deinit { cancel() }

    /// The apply has written every row of table `name`.
    func tableEnded(_ name: String) {
        finished.insert(name)
        startReady()
    }

    /// Waits for the counts started and returns them by entity name.
    ///
    /// - Throws: the ``StoreError`` a count failed with.
    func results() throws(StoreError) -> [String: [DanglingCount]] {
        pending.close()
        worker?.join()
        worker = nil
        if let failure { throw failure }
        return counted
    }

    /// Stops counting: the running count is interrupted, the rest dropped.
    func cancel() {
        pending.fail()
        counter.interrupt()
        worker?.join()
        worker = nil
    }

    /// Queues the entities whose tables are all final now.
    private func startReady() {
        let ready = waiting.filter { $0.tables.isSubset(of: finished) }
        waiting.removeAll { $0.tables.isSubset(of: finished) }
        for (schema, _) in ready { _ = pending.push(schema) }
    }
}
