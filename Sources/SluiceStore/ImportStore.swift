import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Everything an import asks of its store, in the importer's terms: tables
/// for the mapping, key-ordered batches applied with their checkpoint in one
/// transaction, link tables, the keys a run saw and the sweep of the rest,
/// dangling references, and the run ledger. The stores that keep rows,
/// ``SQLiteStore`` and ``PostgresStore`` (with set-based statements),
/// implement it as a ``RowStore``, whose shared code makes the group
/// transaction, the choice of the keys tracked and the dangling counts out
/// of their primitives; ``NullStore`` implements it directly, for
/// benchmarks of everything but the store.
package protocol ImportStore: AnyObject {
    /// Asked just before each commit; when it returns true the transaction
    /// is rolled back and the call throws an interruption
    /// (``StoreError/Cause/interrupted``). Used for cancellation.
    var shouldAbort: (@Sendable () -> Bool)? { get set }
    /// What ``prepare(_:links:)`` changed in existing tables to follow the
    /// mapping, one line each (the run's warnings).
    var migrations: [String] { get }
    /// Link rows, stub rows and dropped children written so far.
    var sideWrites: SideWrites { get }

    /// The columns of table `name` as stored, or nil when it does not exist
    /// (a zero-config import adopts them).
    func storedColumns(of name: String) throws(StoreError) -> [ColumnSchema]?
    /// Creates the tables (or adds missing columns, or migrates changed
    /// types) for `schemas`, and the link tables of to-many relationships.
    func prepare(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError)
    /// Applies every batch of `group` and records its checkpoint, all in one
    /// transaction: on error nothing of the group stays. Returns the counts
    /// per entity index.
    func apply(_ group: BatchGroup) throws(StoreError) -> [Int: EntityCounts]
    /// Before the first batch of link table `link` in key order: whether the
    /// store dropped the table's target index to build it after the load.
    func beginBulkLinks(_ link: LinkSchema) throws(StoreError) -> Bool
    /// After the last batch of a link table ``beginBulkLinks(_:)`` took.
    func endBulkLinks(_ link: LinkSchema) throws(StoreError)

    /// Records a run of `inputs` with `options` (a JSON object, see
    /// ``RunRecord/options``) in the ledger as running, with what tells
    /// whether its process is alive and `resumeCommand` (shown should it
    /// die); marks `interrupted` the runs recorded as running whose process
    /// died. Returns the run's id. Its commit is durable, and so is every
    /// commit before it: after a power loss the ledger still shows the run,
    /// and the checkpoints it cleared stay cleared (docs/durability.md).
    func beginRun(inputs: [String], options: String, resumeCommand: String?) throws(StoreError) -> Int64
    /// The latest run of exactly these `inputs` in the ledger, if any (the
    /// run a resume continues).
    func lastRun(inputs: [String]) throws(StoreError) -> RunRecord?
    /// Records how run `id` ended (`completed`, `failed`, `cancelled`),
    /// durably: every commit of the run before it becomes durable too.
    func finishRun(_ id: Int64, status: RunStatus, records: Int, counts: String, error message: String?)
        throws(StoreError)
    /// Forgets the checkpoints of `inputs` (a run that does not resume).
    func clearCheckpoints(_ inputs: [String]) throws(StoreError)
    /// The last committed checkpoint of `input`, if any.
    func checkpoint(for input: String) throws(StoreError) -> Checkpoint?

    /// Starts recording the keys this run writes to the tables of the
    /// entities among `schemas` that it sweeps (``TableSchema/deleteMissing``)
    /// and of the parents their delete scope names; a resumed run keeps the
    /// keys recorded before.
    func startTrackingSeenKeys(_ schemas: [TableSchema], resuming: Bool) throws(StoreError)
    /// Records the keys of `keys` (rows of `schema`'s key columns alone, in
    /// the order of ``TableSchema/keyColumns``) as seen by the run when
    /// `schema`'s keys are tracked: the keys of units a run skipped (docs/record-digests.md),
    /// which a full run would have written. One transaction; a store that
    /// does not track the table does nothing.
    func markSeen(_ keys: RowArena, of schema: TableSchema) throws(StoreError)
    /// Records, in one transaction, the keys that the sweep of each entity
    /// of `candidates` may delete (rows of its key columns alone): in a run
    /// that sweeps in proportion to the change (docs/record-digests.md), the
    /// keys of the units gone from its inputs that no unit it skips
    /// produces. From then on the entity's sweep deletes only among them
    /// (what the run did not see of them), its ``hasSeenKeys(_:)`` is true,
    /// and a resumed run does the same; they are forgotten with the seen
    /// keys.
    func markRemoved(_ candidates: [(schema: TableSchema, keys: RowArena)]) throws(StoreError)
    /// Whether the run recorded any key of `schema`, or the keys its sweep
    /// in proportion may delete (``markRemoved(_:)``).
    func hasSeenKeys(_ schema: TableSchema) throws(StoreError) -> Bool
    /// How many rows ``deleteMissing(_:links:)`` would delete from
    /// `schema`'s table now, and how many it holds; deletes nothing. Costs
    /// one scan of the table with a seen-keys probe per row, as the sweep.
    func missingRows(_ schema: TableSchema) throws(StoreError) -> MissingRows
    /// Deletes the rows of `schema` whose keys the run did not see, and
    /// their links in `links`; returns how many rows went.
    func deleteMissing(_ schema: TableSchema, links: [LinkSchema]) throws(StoreError) -> Int
    /// Forgets the recorded keys once every sweep is done and marks run `id`
    /// swept (``RunRecord/swept``), in one transaction.
    func stopTrackingSeenKeys(run id: Int64) throws(StoreError)

    /// Links whose target row does not exist, per relationship: the counts
    /// the store keeps up to date, else those of the entities in `counted`,
    /// else counted now (and kept from then on).
    func danglingReferences(
        _ schemas: [TableSchema], _ links: [LinkSchema], counted: [String: [DanglingCount]]
    ) throws(StoreError) -> [DanglingCount]
    /// The dangling counts of `schemas`' references and `links` that the
    /// store keeps up to date and knows now, by ``DanglingRelation/name``:
    /// those need no count.
    func keptDanglingCounts(_ schemas: [TableSchema], _ links: [LinkSchema]) throws(StoreError) -> [String: Int]
    /// A counter on a connection of its own, to count an entity's dangling
    /// references on another thread while the import writes other tables;
    /// nil when the store cannot offer one.
    func makeReferenceCounter() -> (any ReferenceCounter)?

    /// Whether the store keeps record digests (docs/record-digests.md).
    var keepsDigests: Bool { get }
    /// The record digests the store keeps, nil when none.
    func digestSet() throws(StoreError) -> DigestSet?
    /// Starts a run that keeps digests under `fingerprint` and `secret`; the
    /// set is invalid until the run's last ``saveUnits(_:removing:last:)``;
    /// `fresh` drops the units kept. One transaction.
    func startDigests(fingerprint: String, secret: [UInt8], fresh: Bool) throws(StoreError)
    /// Deletes the units of `removed` and saves those of `saved` in one
    /// transaction; the `last` call of a run marks the set valid.
    func saveUnits(_ saved: [StoredUnit], removing removed: [UnitDigest], last: Bool) throws(StoreError)
    /// Marks the digest set invalid: a run writes without keeping digests.
    /// Forgets the entities it covers.
    func voidDigests() throws(StoreError)
    /// Records that the set covers `entities`: every row of their tables
    /// (within their delete scope) was produced by a unit of the set, as
    /// after a sweep of a run that saved it (``DigestSet/covered``). Every
    /// ``startDigests(fingerprint:secret:fresh:)`` forgets them.
    func markCovered(_ entities: [String]) throws(StoreError)
    /// Calls `body` with each unit kept, in digest order.
    func forEachUnit(_ body: (StoredUnit) throws(StoreError) -> Void) throws(StoreError)
    /// Starts a run that writes `tables` (each with its key columns, link
    /// tables with their source columns) under another fingerprint than the
    /// store's valid digest set, which it keeps: the set is marked invalid
    /// and the keys each write inserts, updates or deletes are logged, so
    /// that ``keepDigests(voidingWritten:)`` voids only the units that
    /// produced them. The entities the set covers (``DigestSet/covered``)
    /// stay covered: a row the run writes is no unit's, but its key is
    /// voided, which the next sweep in proportion takes as a candidate.
    /// False, with nothing done, when the store cannot log them (or a table
    /// is missing, or one was rebuilt by a migration).
    func startVoidingWrites(_ tables: [WrittenTable]) throws(StoreError) -> Bool
    /// Ends what ``startVoidingWrites(_:)`` started: the keys written are
    /// added to the set's voided keys and the set is valid again, unless
    /// the voided keys would number more than `limit` or a table lost its
    /// log (then false and the set stays invalid). One transaction.
    func keepDigests(voidingWritten limit: Int) throws(StoreError) -> Bool
    /// The keys voided since the set's units were last saved, each with the
    /// name of its table, in ``UnitKeys``' key encoding; nil when there are
    /// more than `limit`.
    func voidedKeys(limit: Int) throws(StoreError) -> [VoidedKey]?

    /// The store's page cache and the pages written so far, read after each
    /// batch of the key-ordered apply; nil for a store without a page cache
    /// of its own (PostgreSQL, `null:`), whose batches keep their size.
    func pageWrites() -> PageWrites?
    /// The tables among `names` (entity and link tables) whose key-ordered
    /// batches are cut to fit the page cache from the first: those already
    /// holding rows, over which a batch's keys may scatter (a batch into an
    /// empty table appends, and is measured like the rest once applied).
    /// Empty for a store without a page cache of its own.
    func cacheFittedTables(_ names: [String]) throws(StoreError) -> Set<String>

    /// The start of the key-ordered apply, whose link tables come after
    /// every entity table: from now until ``unlinkDeleted()`` the links of
    /// a source deleted by key may wait for its link table's batches
    /// instead of going with the row, so that the link table is written
    /// once (SQLite: `SQLiteStore+DeferredUnlinks`).
    func unlinkLater() throws(StoreError)
    /// The end of the key-ordered apply's link tables, before its
    /// checkpoints: deletes the links that still wait (``unlinkLater()``).
    func unlinkDeleted() throws(StoreError)

    /// Makes the statement running now stop soon with an interruption.
    /// Safe to call from any thread.
    func interrupt()
}

extension ImportStore {
    /// A store that deletes a source's links with its row (PostgreSQL, in
    /// one set-based statement a batch; `null:`) has nothing to defer.
    package func unlinkLater() throws(StoreError) {}
    /// Nothing waits in a store that does not defer (``unlinkLater()``).
    package func unlinkDeleted() throws(StoreError) {}
}

/// Counts the dangling references of a finished entity on a connection of
/// its own (see ``ImportStore/makeReferenceCounter()``).
package protocol ReferenceCounter: AnyObject, Sendable {
    /// The dangling references of `schema`, per reference.
    func references(of schema: TableSchema) throws(StoreError) -> [DanglingCount]
    /// Makes a count running on another thread stop soon. Safe to call from
    /// any thread.
    func interrupt()
}
