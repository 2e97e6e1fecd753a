import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// A store that keeps nothing: every row of every batch is counted as
/// inserted (a deletion as deleted) and dropped. It measures everything but
/// the store — reading, parsing, mapping, batching, sorting — as osm2pgsql's
/// `output-null` does; `sluice import --into null:` selects it.
package final class NullStore: ImportStore, KeepsNoDigests {
    /// What `--into` names it.
    package static let target = "null:"

    package var shouldAbort: (@Sendable () -> Bool)?
    package let migrations: [String] = []
    package let sideWrites = SideWrites()

    package init() {}

    package func storedColumns(of name: String) throws(StoreError) -> [ColumnSchema]? { nil }
    package func prepare(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError) {}

    package func apply(_ group: BatchGroup) throws(StoreError) -> [Int: EntityCounts] {
        if shouldAbort?() == true {
            throw StoreError(path: Self.target, action: "committing a batch", message: "cancelled", cause: .interrupted)
        }
        var counts: [Int: EntityCounts] = [:]
        for batch in group.batches where batch.link == nil {
            let deletions = batch.rows.deletions.count
            counts[batch.entity, default: EntityCounts()].inserted += batch.rows.rowCount - deletions
            counts[batch.entity, default: EntityCounts()].deleted += deletions
        }
        return counts
    }

    package func beginBulkLinks(_ link: LinkSchema) throws(StoreError) -> Bool { false }
    package func endBulkLinks(_ link: LinkSchema) throws(StoreError) {}
    package func beginRun(inputs: [String], options: String, resumeCommand: String?) throws(StoreError) -> Int64 { 0 }
    package func lastRun(inputs: [String]) throws(StoreError) -> RunRecord? { nil }
    package func finishRun(_ id: Int64, status: RunStatus, records: Int, counts: String, error message: String?)
        throws(StoreError)
    {}
    package func clearCheckpoints(_ inputs: [String]) throws(StoreError) {}
    package func checkpoint(for input: String) throws(StoreError) -> Checkpoint? { nil }
    package func startTrackingSeenKeys(_ schemas: [TableSchema], resuming: Bool) throws(StoreError) {}
    package func markSeen(_ keys: RowArena, of schema: TableSchema) throws(StoreError) {}
    package func hasSeenKeys(_ schema: TableSchema) throws(StoreError) -> Bool { false }
    package func missingRows(_ schema: TableSchema) throws(StoreError) -> MissingRows {
        MissingRows(missing: 0, stored: 0)
    }
    package func deleteMissing(_ schema: TableSchema, links: [LinkSchema]) throws(StoreError) -> Int { 0 }
    package func stopTrackingSeenKeys(run id: Int64) throws(StoreError) {}

    package func danglingReferences(
        _ schemas: [TableSchema], _ links: [LinkSchema], counted: [String: [DanglingCount]]
    ) throws(StoreError) -> [DanglingCount] { [] }
    package func keptDanglingCounts(_ schemas: [TableSchema], _ links: [LinkSchema]) throws(StoreError) -> [String: Int]
    { [:] }

    package func makeReferenceCounter() -> (any ReferenceCounter)? { nil }
    package func pageWrites() -> PageWrites? { nil }
    package func cacheFittedTables(_ names: [String]) throws(StoreError) -> Set<String> { [] }
    package func interrupt() {}
}
