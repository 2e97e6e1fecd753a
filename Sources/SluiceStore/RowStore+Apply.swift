import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The group transaction, the same in every store that keeps rows.
extension RowStore {
    /// Applies every batch of `group` and saves its checkpoint in one
    /// transaction: each entity batch merged (its rows made one per key
    /// first, ``BatchRows/mergeOrder(_:_:entity:mixedKeys:)``), then the stubs of each, so
    /// that targets the group creates exist before stubs are considered,
    /// then the link batches and the checkpoint. ``shouldAbort`` is asked
    /// before the commit: when it says so, or on any error, the transaction
    /// rolls back and nothing of the group stays. Returns the counts per
    /// entity index. Per batch, O(n log n) in its rows plus the store's
    /// statements.
    package func apply(_ group: BatchGroup) throws(StoreError) -> [Int: EntityCounts] {
        try beginGroup()
        do throws(StoreError) {
            var counts: [Int: EntityCounts] = [:]
            for batch in group.batches where batch.link == nil {
                // Copied only when a key occurs more than once and a combined row is added.
                var rows = batch.rows
                let order = BatchRows.mergeOrder(
                    &rows, batch.schema, entity: batch.entity, mixedKeys: group.mixedKeys)
                counts[batch.entity, default: EntityCounts()].add(try merge(rows, order, into: batch.schema))
            }
            for batch in group.batches where batch.link == nil { try stubReferences(batch.rows, batch.schema) }
            for batch in group.batches {
                if let link = batch.link {
                    try applyLinks(batch.rows, link, entity: batch.entity, mixedKeys: group.mixedKeys)
                }
            }
            if let checkpoint = group.checkpoint { try saveCheckpoint(checkpoint) }
            if shouldAbort?() == true {
                throw StoreError(path: name, action: "committing a batch", message: "cancelled", cause: .interrupted)
            }
            try commitGroup()
            return counts
        } catch {
            rollbackGroup()
            throw error
        }
    }
}
