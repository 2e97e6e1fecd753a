#if canImport(Glibc)
import Glibc
#endif
import CSluiceSQLite3

/// Runs one import: parses inputs on the calling thread and applies batch
/// groups on a store thread, joined by a bounded queue so that a slow store
/// blocks the parser. Memory: the queue's groups plus the group being filled
/// plus one record.
final class ImportPipeline {
    private let compiled: CompiledMapping
    private let options: ImportOptions
    private let storePath: String
    private let store: SQLiteStore
    private let queue: BlockingQueue<BatchGroup>
    private let batcher: Batcher
    private let startTime = ImportPipeline.now()
    private let progress: (@Sendable (ImportProgress) -> Void)?
    private var storeWorker: Worker?
    /// Set by the caller's cancellation or by ``cancel()``; every phase
    /// checks it between batches.
    let cancelled: Flag
    private let runID: Int64
    private var runRecorded = false

    // Owned by the store thread until it is joined.
    private var storeFailure: ImportError?
    /// The key-ordered apply's sorter (``ApplyOrder/key``), fed by the store
    /// thread; its rows are applied once the queue closes.
    private let sorter: KeyOrderSorter?
    /// Set by ``finish()`` and ``drain()``: the sorted rows may be applied.
    /// A pipeline dropped without either applies nothing.
    private let applySorted = Flag()
    /// Dangling references counted while the key-ordered apply goes on;
    /// set by the store thread, read once it is joined.
    private var earlyCounts: EarlyReferenceCounts?
    private var counts: [EntityCounts]

    // The input being read.
    private var input: (name: String, assembler: RecordAssembler, parser: DocumentParser)?
    private var inputBytes: Int64 = 0
    private var recordsBefore = 0
    private var rawBefore: Int64 = 0
    private var rawCurrent: Int64 = 0
    /// All inputs' sizes together, when every size is known (for the ETA).
    private let expectedBytes: Int64?
    /// Each input's identity, saved with its checkpoints.
    private var identities: [String: InputIdentity?] = [:]
    /// Records of each input committed by the run being resumed.
    private var resumePoints: [String: Int] = [:]
    /// Standard input: the CRC-32 of the bytes fed so far, the identity the
    /// next checkpoint records (the prefix through the chunk being parsed),
    /// and, when resuming, the prefix the stream must repeat; until it has,
    /// no group is cut (at most one chunk of records waits).
    private var streamChecksum: Int64 = 0
    private var streamIdentity: InputIdentity?
    private var streamToVerify: InputIdentity?
    /// The stream prefixes of the interrupted run, by input name.
    private var resumedStreams: [String: InputIdentity] = [:]

    init(
        compiled: CompiledMapping, storePath: String, options: ImportOptions,
        inputs: [(name: String, identity: InputIdentity?)], expectedBytes: Int64?,
        progress: (@Sendable (ImportProgress) -> Void)?, cancellation: Flag = Flag()
    ) throws(ImportError) {
        cancelled = cancellation
        self.compiled = compiled
        self.storePath = storePath
        self.expectedBytes = expectedBytes
        self.options = options
        self.progress = progress
        do {
            store = try SQLiteStore(path: storePath, options: options.store)
            for mapper in compiled.mappers where !mapper.tableIsReady {
                if let stored = try store.storedColumns(of: mapper.schema.name) { mapper.adopt(stored: stored) }
            }
            // A table still waiting for its first record is made with its first batch.
            try store.prepare(compiled.mappers.filter(\.tableIsReady).map(\.schema), links: compiled.links)
            runID = try store.beginRun(inputs: inputs.map(\.name))
            if !options.resume { try store.clearCheckpoints(inputs.map(\.name)) }
            try store.startTrackingSeenKeys(compiled.mappers.map(\.schema), resuming: options.resume)
        } catch {
            throw .store(error)
        }
        identities = Dictionary(inputs.map { ($0.name, $0.identity) }, uniquingKeysWith: { first, _ in first })
        if options.resume { (resumePoints, resumedStreams) = try Self.resumePoints(store, inputs) }
        sorter = options.order == .key
            ? KeyOrderSorter(
                directory: options.sort.directory ?? Self.directory(of: storePath), options: options.sort, defaultMode: options.store.mode) : nil
        queue = BlockingQueue(capacity: options.batch.queueDepth, weightLimit: options.batch.maxBytes) { $0.byteSize }
        batcher = Batcher(mappers: compiled.mappers, links: compiled.links, limits: options.batch)
        counts = Array(repeating: EntityCounts(), count: compiled.mappers.count)
        let cancelled = self.cancelled
        store.shouldAbort = { cancelled.isSet }
        batcher.onFull = { [unowned self] _ in try self.cutGroup() }
        storeWorker = Worker { [unowned self] in self.runStore() }
    }

    deinit {
        queue.fail()
        storeWorker?.join()
        // Its read connection closes before the store's, so that the store's
        // close is the last and checkpoints the WAL into the database file.
        earlyCounts?.cancel()
        earlyCounts = nil
    }

    // MARK: - Store thread

    private func runStore() {
        while let group = queue.pop() {
            if cancelled.isSet { break }
            do throws(ImportError) {
                if let sorter {
                    do { try sorter.add(group) } catch { throw .spill(error) }
                } else {
                    try applyToStore(group)
                }
                progress?(ImportProgress(
                    records: group.records, bytesRead: group.rawBytes, bytesTotal: expectedBytes,
                    seconds: ImportPipeline.now() - startTime))
            } catch {
                storeFailure = error
                queue.fail()
                return
            }
        }
        guard let sorter, applySorted.isSet, !cancelled.isSet else { return }
        do { try applyInKeyOrder(sorter) } catch { storeFailure = error }
    }

    /// Applies one group in its own transaction and adds up its counts.
    private func applyToStore(_ group: BatchGroup) throws(ImportError) {
        let applied: [Int: EntityCounts]
        do { applied = try store.apply(group) } catch { throw .store(error) }
        for (entity, delta) in applied { counts[entity].add(delta) }
    }

    /// The key-ordered apply: each table's runs merged (on a second thread)
    /// and applied in key order, referenced tables first and link tables
    /// last, then the inputs' checkpoints.
    private func applyInKeyOrder(_ sorter: KeyOrderSorter) throws(ImportError) {
        // Three batches are in flight (applied, queued, being merged): a
        // quarter of the batch byte bound each keeps them within one batch's
        // worth of memory.
        let deleteMissing = compiled.mappers.contains {
            ($0.schema.deleteMissing ?? options.store.deleteMissing) && !$0.schema.keyColumns.isEmpty
        }
        earlyCounts = EarlyReferenceCounts(
            storePath: storePath, compiled: compiled, deleteMissing: deleteMissing, applied: sorter.applyOrder)
        let feed = MergedBatchFeed(sorter: sorter, rows: options.batch.maxRows, bytes: max(1, options.batch.maxBytes / 4))
        defer { feed.stop() }
        // An empty link table gets its target index after the load.
        var bulkLink: LinkSchema?
        var table = ""
        do {
            while let item = try feed.next() {
                if cancelled.isSet { return }
                switch item {
                case .batch(let batch, let startsTable):
                    if startsTable, let link = batch.link, try store.beginBulkLinks(link) { bulkLink = link }
                    table = batch.link?.name ?? batch.schema.name
                    try applyToStore(BatchGroup(batches: [batch], checkpoint: nil, rawBytes: 0, records: 0))
                    feed.recycle(batch.rows)
                case .tableEnd:
                    if let link = bulkLink { try store.endBulkLinks(link) }
                    bulkLink = nil
                    earlyCounts?.tableEnded(table)
                }
            }
        } catch let error as StoreError {
            throw .store(error)
        } catch let error as SpillError {
            throw .spill(error)
        } catch let error as ImportError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
        feed.stop()
        for checkpoint in sorter.checkpoints {
            try applyToStore(BatchGroup(batches: [], checkpoint: checkpoint, rawBytes: 0, records: 0))
        }
    }

    /// The directory holding `path` (`.` when it names none).
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: - Inputs

    /// Starts reading an input called `name` of `format`.
    func beginInput(name: String, format: InputFormat, compressed: Bool) throws(ImportError) {
        let documentKind: DocumentKind = format == .xml ? .xml : .json
        guard documentKind == compiled.documentKind else {
            throw .usage("\(name): the input is \(format.rawValue) but the mapping's record paths address \(compiled.documentKind.rawValue)")
        }
        let assembler = RecordAssembler(routes: compiled.routes, sink: batcher, limits: options.limits)
        assembler.skipThrough = resumePoints[name] ?? 0
        let multiple = format == .jsonl || compiled.routes.contains { $0.path.components.isEmpty }
        let parser = DocumentParser(
            format: format, handler: assembler, name: name, compressed: compressed, multipleValues: multiple,
            limits: options.limits)
        input = (name, assembler, parser)
        inputBytes = 0
        rawCurrent = 0
        streamChecksum = 0
        streamIdentity = nil
        streamToVerify = fileIdentity(name) == nil ? resumedStreams[name] : nil
    }

    /// Parses the next bytes of the current input; `raw` is how many bytes
    /// of the underlying file have been read so far.
    func feed(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        guard let input else { return }
        if cancelled.isSet { throw .cancelled }
        rawCurrent = raw
        if fileIdentity(input.name) == nil { try followStream(bytes) }
        do {
            try input.parser.feed(bytes)
        } catch {
            throw translate(error)
        }
        inputBytes += Int64(bytes.count)
    }

    /// Ends the current input: the parser must find the document complete;
    /// its remaining rows are queued with the input's final checkpoint.
    func endInput() throws(ImportError) {
        guard let input else { return }
        do {
            try input.parser.finish()
        } catch {
            throw translate(error)
        }
        if let expected = streamToVerify {
            throw .usage("cannot resume: \(input.name) ended after \(inputBytes) bytes, before the \(expected.size) bytes the interrupted run had read; run the import without --resume")
        }
        do { try cutGroup() } catch let error as ImportError { throw error } catch { throw .usage("\(error)") }
        recordsBefore += input.assembler.recordCount
        rawBefore += rawCurrent
        rawCurrent = 0
        self.input = nil
    }

    /// Waits for the store to commit everything queued, runs delete-missing
    /// (every input was read completely and without error), records the run
    /// as completed and reports.
    func finish() throws(ImportError) -> ImportReport {
        applySorted.set()
        queue.close()
        storeWorker?.join()
        storeWorker = nil
        if let storeFailure {
            var error = storeFailure
            if case .store(let failure) = storeFailure, failure.code == SQLITE_INTERRUPT && cancelled.isSet { error = .cancelled }
            record(failure: error)
            throw error
        }
        if cancelled.isSet {
            record(failure: .cancelled)
            throw .cancelled
        }
        var warnings = store.migrations
        do {
            for (entity, mapper) in compiled.mappers.enumerated()
            where (mapper.schema.deleteMissing ?? options.store.deleteMissing) && !mapper.schema.keyColumns.isEmpty {
                // Keys the store received, in this run or in the interrupted
                // run it resumes (filtered-out records do not count).
                if try !store.hasSeenKeys(mapper.schema) && !options.allowEmptyDelete {
                    warnings.append("delete-missing left \(mapper.schema.name) alone: the run saw none of its records (allow it with --allow-empty-delete)")
                    continue
                }
                counts[entity].deleted += try store.deleteMissing(mapper.schema, links: compiled.links)
            }
            try store.stopTrackingSeenKeys()
        } catch {
            let failure: ImportError = cancelled.isSet ? .cancelled : .store(error)
            record(failure: failure)
            throw failure
        }
        if cancelled.isSet {
            record(failure: .cancelled)
            throw .cancelled
        }
        for (entity, count) in batcher.skipped.enumerated() { counts[entity].skipped += count }
        var report = makeReport()
        let dangling: [DanglingCount]
        do throws(StoreError) {
            let counted = try earlyCounts?.results() ?? [:]
            earlyCounts = nil
            dangling = try store.danglingReferences(compiled.mappers.map(\.schema), compiled.links, counted: counted)
        } catch {
            record(failure: .store(error))
            throw .store(error)
        }
        for relationship in dangling where relationship.count > 0 {
            let (name, count) = (relationship.name, relationship.count)
            report.dangling[name] = count
            warnings.append("\(name): \(count) links to records that are not in the store")
            if relationship.policy == .error {
                let error = ImportError.danglingReferences(
                    "\(name): \(count) links to records that are not in the store (the relationship says missing: error); the data is committed")
                record(failure: error)
                throw error
            }
        }
        report.warnings = warnings
        do {
            runRecorded = true
            try store.finishRun(runID, status: "completed", records: report.records, counts: report.json, error: nil)
        } catch {
            throw .store(error)
        }
        return report
    }

    private func makeReport() -> ImportReport {
        let names = compiled.mappers.map(\.schema.name)
        return ImportReport(
            records: recordsBefore + (input?.assembler.recordCount ?? 0), bytes: rawBefore + rawCurrent,
            seconds: ImportPipeline.now() - startTime,
            entities: Array(zip(names, counts)).map { (name: $0.0, counts: $0.1) })
    }

    /// Records a failed (or cancelled) run in the ledger; a failure to write
    /// the ledger is not allowed to hide the original error.
    func record(failure: ImportError) {
        guard !runRecorded else { return }
        runRecorded = true
        let status: String
        if case .cancelled = failure { status = "cancelled" } else { status = "failed" }
        _ = try? store.finishRun(runID, status: status, records: makeReport().records, counts: makeReport().json, error: "\(failure)")
    }

    /// Stops: pending groups are dropped, the batch being applied rolls back.
    func cancel() {
        cancelled.set()
        store.interrupt()
    }

    /// After a failure: let the store commit what was parsed before it, then
    /// stop.
    func drain() {
        applySorted.set()
        queue.close()
        storeWorker?.join()
        storeWorker = nil
    }

    /// The committed records of each input of an interrupted run, checked
    /// against the inputs' identities now.
    private static func resumePoints(
        _ store: SQLiteStore, _ inputs: [(name: String, identity: InputIdentity?)]
    ) throws(ImportError) -> (points: [String: Int], streams: [String: InputIdentity]) {
        var points: [String: Int] = [:]
        var streams: [String: InputIdentity] = [:]
        for (name, identity) in inputs {
            let saved: Checkpoint?
            do { saved = try store.checkpoint(for: name) } catch { throw .store(error) }
            guard let saved else { continue }
            guard let identity else {
                guard let prefix = saved.identity, prefix.isStreamPrefix else {
                    throw .usage("cannot resume: the interrupted run did not read \(name) as a stream; run the import without --resume")
                }
                streams[name] = prefix
                points[name] = saved.records
                continue
            }
            guard saved.identity == identity else {
                throw .usage("cannot resume: \(name) changed since the interrupted run (then \(saved.identity.map { "\($0)" } ?? "unknown"), now \(identity)); run the import without --resume")
            }
            points[name] = saved.records
        }
        return (points, streams)
    }

    /// The identity of input `name` when it is a file; `nil` for a stream.
    private func fileIdentity(_ name: String) -> InputIdentity? { identities[name] ?? nil }

    /// Standard input: extends the checksum over the next bytes, sets the
    /// identity checkpoints record, and when resuming checks the prefix the
    /// interrupted run read. O(bytes).
    private func followStream(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        if let expected = streamToVerify, inputBytes + Int64(bytes.count) >= expected.size {
            let head = UnsafeRawBufferPointer(rebasing: bytes[..<Int(expected.size - inputBytes)])
            guard InputIdentity.checksum(streamChecksum, extendedWith: head) == expected.headChecksum else {
                throw .usage("cannot resume: \(input?.name ?? "-") differs from the stream of the interrupted run (\(expected)); run the import without --resume")
            }
            streamToVerify = nil
        }
        streamChecksum = InputIdentity.checksum(streamChecksum, extendedWith: bytes)
        streamIdentity = .streamPrefix(bytes: inputBytes + Int64(bytes.count), checksum: streamChecksum)
    }

    private func cutGroup() throws {
        guard let input, !batcher.isEmpty, streamToVerify == nil else { return }
        let records = input.assembler.recordCount
        let group = batcher.cut(
            checkpoint: Checkpoint(input: input.name, records: records, bytes: inputBytes, identity: fileIdentity(input.name) ?? streamIdentity),
            rawBytes: rawBefore + rawCurrent, records: recordsBefore + records)
        if !queue.push(group) {
            throw storeFailure ?? ImportError.store(StoreError(path: "", action: "applying a batch", message: "the store stopped", code: 0))
        }
    }

    private func translate(_ error: ParseError) -> ImportError {
        var error = error
        if case .rejected(let inner) = error.reason {
            if let importError = inner as? ImportError { return importError }
            if let storeError = inner as? StoreError { return .store(storeError) }
        }
        if let assembler = input?.assembler {
            let rejected: Bool
            if case .rejected = error.reason { rejected = true } else { rejected = false }
            error.location.record = assembler.isInRecord || rejected ? max(assembler.recordCount, 1) : assembler.recordCount + 1
        }
        return .parse(error)
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
