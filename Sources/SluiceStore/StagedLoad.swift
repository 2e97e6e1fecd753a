import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// A key-ordered run that a store loads by staging: each group's rows go to
/// the store as they are read, in input order, and once every input is read
/// one merge per table makes them one row per key and writes them, with the
/// inputs' checkpoints, in one transaction. What the sort and the
/// per-batch apply of ``ImportStore/apply(_:)`` would have written, row for
/// row and count for count (``ImportStore/stagedLoad(_:links:)`` says when
/// a store offers one).
package protocol StagedLoad: AnyObject {
    /// Stages every row of `group` and keeps its checkpoint for the merge.
    /// Commits on its own: a kill loses only the staging, which the run's
    /// end needs and nothing else reads.
    func stage(_ group: BatchGroup) throws(StoreError)
    /// The last checkpoint staged of each input, to save once the merge is
    /// committed.
    var checkpoints: [Checkpoint] { get }
    /// Merges what was staged, each table in the order its references ask
    /// for, then the link tables, and saves the checkpoints, in one
    /// transaction; returns the counts per entity index. Logs into
    /// `mixedKeys`, when given, that the run's keys cannot be trusted if any
    /// key's occurrences disagree.
    func merge(mixedKeys: MixedKeyLog?) throws(StoreError) -> [Int: EntityCounts]
}

extension ImportStore {
    /// No staged load: the rows are sorted and applied in batches.
    package func stagedLoad(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError) -> (any StagedLoad)? {
        nil
    }
}
