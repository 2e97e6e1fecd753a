import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// A store that keeps the rows it is given (``SQLiteStore``,
/// ``PostgresStore``): the primitives out of which the seam's shared code
/// makes, once for every such store, the group transaction and the merge
/// prelude (``apply(_:)``), the choice of the tables whose keys a run
/// records (``startTrackingSeenKeys(_:resuming:)``) and the dangling counts
/// with those counted early (``danglingReferences(_:_:counted:)``). A store
/// implements these primitives and the rest of ``ImportStore``.
package protocol RowStore: ImportStore {
    /// The store's file, or its server and database, for messages.
    var name: String { get }

    /// Opens the transaction of a group of batches.
    func beginGroup() throws(StoreError)
    /// Merges one entity batch into `schema`'s table (made first when it is
    /// missing or has fewer columns). `order` is the rows to write, one per
    /// key in key order (``BatchRows/mergeOrder(_:_:entity:mixedKeys:)``): those that are
    /// deletions delete their key and the links from it first (the links
    /// in the link batches after ``ImportStore/unlinkLater()``); then new keys
    /// are inserted, changed rows updated and unchanged rows left alone as
    /// ``TableSchema/mode`` says, and, when the table's keys are tracked
    /// (``trackSeenKeys(of:resuming:)``), the keys that are not deletions are
    /// recorded as seen. Returns what it did.
    func merge(_ rows: RowArena, _ order: [Int], into schema: TableSchema) throws(StoreError) -> EntityCounts
    /// Creates the stub rows that the to-one references of an entity batch
    /// merged in this group ask for (``Reference/missing``); called once
    /// every entity batch of the group is merged.
    func stubReferences(_ rows: RowArena, _ schema: TableSchema) throws(StoreError)
    /// Applies one batch of `link`'s rows: per source, links equal to the
    /// stored ones are left alone and different ones replace them, as the
    /// link's rule says; stubs for missing targets when asked. Sources whose
    /// records disagree go to `mixedKeys` as keys of `entity`
    /// (``BatchRows/linkSources(_:_:entity:mixedKeys:)``).
    func applyLinks(
        _ rows: RowArena, _ link: LinkSchema, entity: Int, mixedKeys: MixedKeyLog?
    ) throws(StoreError)
    /// Saves how far an input has been read, in the group's transaction.
    func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError)
    /// Commits the group's transaction.
    func commitGroup() throws(StoreError)
    /// Rolls the group's transaction back, after an error.
    func rollbackGroup()

    /// From now on records the keys each merge into `schema`'s table
    /// writes, finds unchanged or skips; unless `resuming`, forgets the keys
    /// recorded before.
    func trackSeenKeys(of schema: TableSchema, resuming: Bool) throws(StoreError)

    /// Rows of `schema`'s table whose reference names a key with no target
    /// row, per reference.
    func danglingReferences(of schema: TableSchema) throws(StoreError) -> [DanglingCount]
    /// How many of `link`'s rows naming `target` (all of them when its
    /// item value is empty) name a key `target`'s table does not hold.
    func danglingLinks(_ link: LinkSchema, to target: LinkTarget) throws(StoreError) -> Int
    /// The dangling counts the store keeps up to date (``keepDanglingCounts(_:)``)
    /// of those of `relations` it knows now, by ``DanglingRelation/name``; a
    /// relationship left out (never counted, counted under another
    /// definition, or let go by a write whose effect the store could not
    /// count) is counted again at the run's end.
    func storedDanglingCounts(_ relations: [DanglingRelation]) throws(StoreError) -> [String: Int]
    /// Records `counts`, just counted, and from now on keeps each exact in
    /// the transaction of every write that changes it; a store that keeps
    /// none does nothing (its counts are counted at every run's end).
    func keepDanglingCounts(_ counts: [(relation: DanglingRelation, count: Int)]) throws(StoreError)
}
