@_spi(Machinery) import SluiceRecords

/// What the store thread owns: the store, the key-ordered apply's sorter,
/// the counts and the progress figures. The store thread runs ``run()``,
/// the one consumer of the groups every parse side cuts; before it starts
/// and once it is joined the orchestrator uses the store and counts for the
/// rest of the run (``ImportPipeline/finish()``), and while it runs calls
/// only ``interrupt()``. Groups come applied as they arrive (input order),
/// or sorted into runs and applied in key order once every input is read.
final class StoreSide {
    let store: any ImportStore
    let compiled: CompiledMapping
    let options: ImportOptions
    let exchange: PipelineExchange
    /// The key-ordered apply's sorter (``ApplyOrder/key``); its rows are
    /// applied once the queue closes.
    let sorter: KeyOrderSorter?
    let progress: (@Sendable (ImportProgress) -> Void)?
    let startTime: Double
    /// All inputs' sizes together, when every size is known (for the ETA).
    let expectedBytes: Int64?
    /// The entities' names, copied once: the mappers are the parse side's
    /// while it runs (a schemaless one grows its schema).
    let entityNames: [String]
    /// Rows written, by entity.
    var counts: [EntityCounts]
    /// Dangling references counted while the key-ordered apply goes on,
    /// read once the store thread is joined.
    var earlyCounts: EarlyReferenceCounts?
    /// What progress reports say: the last group's record and byte counts,
    /// and in key order the rows to apply, the rows applied and when
    /// applying began.
    var recordsQueued = 0
    var bytesQueued: Int64 = 0
    var rowsToApply: Int?
    var rowsApplied = 0
    var applyStart = 0.0

    /// Stops early counts still running before the store is let go: a run
    /// that ends early (an error, a cancellation) has no use for them.
    deinit { earlyCounts?.cancel() }

    /// A store side applying `exchange`'s groups to `store`, through
    /// `sorter` in key order; `startTime` and `expectedBytes` for progress.
    init(
        store: any ImportStore, compiled: CompiledMapping, options: ImportOptions, exchange: PipelineExchange,
        sorter: KeyOrderSorter?, startTime: Double, expectedBytes: Int64?,
        progress: (@Sendable (ImportProgress) -> Void)?
    ) {
        self.store = store
        self.compiled = compiled
        self.options = options
        self.exchange = exchange
        self.sorter = sorter
        self.startTime = startTime
        self.expectedBytes = expectedBytes
        self.progress = progress
        entityNames = compiled.mappers.map(\.schema.name)
        counts = Array(repeating: EntityCounts(), count: compiled.mappers.count)
    }

    /// Makes the statement the store runs now stop soon; the one call the
    /// store allows from another thread.
    func interrupt() { store.interrupt() }

    /// Takes groups off the queue until it closes: applies each (input
    /// order) or adds it to the sorter (key order), then, once the run may
    /// finish, applies the sorted rows.
    func run() {
        while let group = exchange.groups.pop() {
            if exchange.cancelled.isSet {
                // A parse side waiting for room in the queue stops too.
                exchange.failure.set(.cancelled)
                exchange.groups.fail()
                return
            }
            do throws(ImportError) {
                if let sorter {
                    do { try sorter.add(group) } catch { throw .spill(error) }
                } else {
                    try applyToStore(group)
                }
                recordsQueued = group.records
                bytesQueued = group.rawBytes
                // Consumed: a batcher that takes an arena finds it unshared.
                exchange.spares.give(rowsOf: consume group)
                reportProgress(.reading)
            } catch {
                exchange.failure.set(error)
                exchange.groups.fail()
                return
            }
        }
        // The parse has ended: the last group's arenas would be held through the apply of the sorted rows.
        exchange.spares.removeAll()
        guard let sorter, exchange.applySorted.isSet, !exchange.cancelled.isSet else { return }
        do { try applyInKeyOrder(sorter) } catch { exchange.failure.set(error) }
    }

    /// The merge's next item, a failure of its sorted runs a spill error.
    private func nextItem(of feed: MergedBatchFeed) throws(ImportError) -> MergedBatchFeed.Item? {
        do { return try feed.next() } catch { throw .spill(error) }
    }

    /// Runs a store call; its failure is the run's store error.
    private func storing<T>(_ call: () throws(StoreError) -> T) throws(ImportError) -> T {
        do { return try call() } catch { throw .store(error) }
    }

    /// Applies one group in its own transaction and adds up its counts.
    func applyToStore(_ group: BatchGroup) throws(ImportError) {
        let applied: [Int: EntityCounts]
        do { applied = try store.apply(group) } catch { throw .store(error) }
        for (entity, delta) in applied { counts[entity].add(delta) }
    }

    /// The key-ordered apply: each table's runs merged (on a second thread)
    /// and applied in key order, referenced tables first and link tables
    /// last (the links of the sources deleted by key with them,
    /// ``ImportStore/unlinkLater()``), then the inputs' checkpoints.
    func applyInKeyOrder(_ sorter: KeyOrderSorter) throws(ImportError) {
        // Three batches are in flight (applied, queued, being merged): a
        // quarter of the batch byte bound each keeps them within one batch's
        // worth of memory.
        let deleteMissing = compiled.mappers.contains { $0.schema.deleteMissing }
        let kept = try storing { () throws(StoreError) in
            try store.keptDanglingCounts(compiled.mappers.map(\.schema), compiled.links)
        }
        earlyCounts = EarlyReferenceCounts(
            store: store, compiled: compiled, deleteMissing: deleteMissing, applied: sorter.applyOrder,
            kept: Set(kept.keys))
        let fitted = try storing { () throws(StoreError) in try store.cacheFittedTables(sorter.applyOrder) }
        try storing { () throws(StoreError) in try store.unlinkLater() }
        let feed: MergedBatchFeed
        do {
            feed = try MergedBatchFeed(
                sorter: sorter, rows: options.batch.maxRows, bytes: max(1, options.batch.maxBytes / 4), fitted: fitted)
        } catch {
            throw .spill(error)
        }
        defer { feed.stop() }
        // An empty link table gets its target index after the load.
        var bulkLink: LinkSchema?
        var table = ""
        rowsToApply = sorter.rowsAdded
        var rowsAppliedBefore = 0
        applyStart = ImportPipeline.now()
        while let item = try nextItem(of: feed) {
            if exchange.cancelled.isSet { return }
            switch item {
            case .batch(let batch, let startsTable):
                if startsTable, let link = batch.link,
                    try storing({ () throws(StoreError) in try store.beginBulkLinks(link) })
                {
                    bulkLink = link
                }
                table = batch.link?.name ?? batch.schema.name
                var group = BatchGroup(batches: [batch], checkpoint: nil, rawBytes: 0, records: 0)
                group.mixedKeys = sorter.mixedKeys
                let before = store.pageWrites()
                try applyToStore(group)
                if let before, let after = store.pageWrites() {
                    feed.fitCache(
                        CacheFittedRows(
                            table: table, applied: batch.rows.rowCount, wrote: after.written - before.written,
                            cachePages: after.cachePages, maxRows: options.batch.maxRows))
                }
                rowsApplied += batch.rows.rowCount
                reportProgress(.applying, table: table)
                feed.recycle(batch.rows)
            case .tableEnd:
                // Repeated keys were combined: the rows left to apply are fewer.
                let applied = rowsApplied - rowsAppliedBefore
                rowsToApply = (rowsToApply ?? 0) - (sorter.rowsAdded(to: table) - applied)
                rowsAppliedBefore = rowsApplied
                if let link = bulkLink { try storing { () throws(StoreError) in try store.endBulkLinks(link) } }
                bulkLink = nil
                earlyCounts?.tableEnded(table)
            }
        }
        feed.stop()
        try storing { () throws(StoreError) in try store.unlinkDeleted() }
        for checkpoint in sorter.checkpoints {
            try applyToStore(BatchGroup(batches: [], checkpoint: checkpoint, rawBytes: 0, records: 0))
        }
    }

    /// Tells the caller where the run is (see ``ImportProgress``).
    func reportProgress(_ phase: ImportProgress.Phase, table: String? = nil) {
        guard let progress else { return }
        let seconds = ImportPipeline.now() - startTime
        let left: Double?
        switch phase {
        case .reading:
            left = ProgressEstimate.reading(
                seconds: seconds, bytesRead: bytesQueued, bytesTotal: expectedBytes, keyOrder: sorter != nil)
        case .applying:
            left = ProgressEstimate.applying(
                elapsed: ImportPipeline.now() - applyStart, applied: rowsApplied, total: rowsToApply)
        case .done: left = 0
        case .deleting, .checking: left = nil
        }
        progress(
            ImportProgress(
                phase: phase, table: table, records: recordsQueued, bytesRead: bytesQueued, bytesTotal: expectedBytes,
                rowsApplied: rowsApplied, rowsTotal: rowsToApply, seconds: seconds, secondsLeft: left,
                entities: Dictionary(zip(entityNames, counts), uniquingKeysWith: { first, _ in first })))
    }
}
