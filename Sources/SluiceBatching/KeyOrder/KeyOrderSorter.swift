@_spi(Machinery) import SluiceRecords

/// Collects batch groups for the key-ordered apply: each table's rows are
/// held in memory up to ``SortOptions/memoryBytes`` (all tables together),
/// then sorted by key and spilled as one run per table; once the input is
/// read, ``chunks(of:rows:bytes:)`` merges a table's runs into key-ordered
/// batches.
///
/// Memory: the rows held (at most the budget, plus the arrays' spare
/// capacity; 1.5 times that when runs are written aside, the run being
/// written beside half the budget being filled) and, while merging, about
/// half the budget of read buffers (see ``RunMerge``).
/// Disk: the rows once, in a compact encoding compressed with zstd (about
/// 2.3× smaller on generated events), plus once more for the rows
/// of every ``SortOptions/fanIn`` runs merged into one when a table has more
/// runs than that (the smallest runs are merged, so a row is rewritten about
/// log_fanIn(runs) times).
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
package final class KeyOrderSorter {
    /// One table's rows: those held in memory and its run file.
    final class Table {
        /// The table's latest batch metadata (entity, schema, link).
        var prototype: Batch
        /// The columns rows are ordered by: the key, or the link's source.
        let keys: [Int]
        /// Whether one row per key is spilled (entity tables with a key;
        /// link tables keep every row), and whether a key's occurrences are
        /// combined into it rather than the last kept (`replace` mode).
        let onePerKey: Bool
        let combining: Bool
        @exclusivity(unchecked) var held: RowArena
        /// Written by one thread at a time: the sorter's, or the one writing
        /// a run aside.
        var file: RunFile?
        /// The most bytes one row of the table has held (``RowArena/byteSize``).
        var largestRow = 0
        /// Rows added to this table, before repeated keys are combined.
        var rowsAdded = 0

        /// The read buffers of a compaction's merge: half the sort budget.
        let bufferBytes: Int

        /// A table shaped as `batch`, whose compactions read through
        /// `bufferBytes`.
        init(_ batch: Batch, bufferBytes: Int) {
            prototype = batch
            prototype.rows = RowArena(columnCount: 0)
            if let link = batch.link {
                keys = Array(0..<link.sourceColumns.count)
                onePerKey = false
            } else {
                keys = batch.schema.keyColumns
                onePerKey = !keys.isEmpty
            }
            combining = batch.schema.combinesOccurrences
            held = RowArena(columnCount: batch.rows.columnCount)
            self.bufferBytes = bufferBytes
        }

        /// Sorts `rows` by key (one row per key where the table keeps one,
        /// the keys whose occurrences disagree going to `log` as keys of
        /// `entity`), writes them as a new run, then merges the smallest
        /// runs while there are more than `fanIn`; returns the rows written.
        /// O(n log n) in the rows.
        func writeRun(
            _ rows: inout RowArena, entity: Int, fanIn: Int, directory: String, codec: RunCodec, log: MixedKeyLog?
        ) throws(SpillError) -> Int {
            let file: RunFile
            if let existing = self.file {
                file = existing
            } else {
                file = try RunFile(directory: directory, codec: codec)
            }
            self.file = file
            let order = KeyOrderSorter.sortedRows(
                &rows, keys: keys, onePerKey: onePerKey, combining: combining,
                disagreeing: log.map { log in
                    { [keys] rows, row in log.add(table: entity, rows, row: row, keys: keys) }
                })
            for row in order { try file.append(row: row, of: rows, ordinal: rows.ordinals[row]) }
            try file.endRun()
            while file.runs.count > fanIn {
                try compact(file, fanIn: fanIn, columnCount: rows.columnCount, codec: codec)
            }
            return order.count
        }

        /// Merges the table's smallest runs (`fanIn` of them, rows of at
        /// most `columnCount` cells) into one: runs of about the same size
        /// are merged together, so rows are rewritten once per tier rather
        /// than once per compaction.
        func compact(_ file: RunFile, fanIn: Int, columnCount: Int, codec: RunCodec) throws(SpillError) {
            let bySize = file.runs.indices.sorted { file.runs[$0].count < file.runs[$1].count }
            let merged = bySize.prefix(fanIn).sorted()
            let merge = try RunMerge(
                file: file, runs: merged, keys: keys, columnCount: columnCount, bufferBytes: bufferBytes, codec: codec)
            while let head = merge.head {
                try file.append(row: 0, of: head.current, ordinal: head.current.ordinals[0])
                try merge.advance()
            }
            try file.endRun()
            file.dropRuns(Set(merged))
        }
    }

    package let directory: String
    private let options: SortOptions
    /// Compresses and decompresses the run files; made at the first spill.
    private var codec: RunCodec?
    var tables: [String: Table] = [:]
    var names: [String] = []
    @exclusivity(unchecked) var heldBytes = 0
    /// Whether runs are written aside (``spillAside()``), and the one being
    /// written.
    private let writesAside: Bool
    var runAside: (worker: Worker?, run: RunAside)?
    private var released = false
    private var sequence = 0
    /// The last checkpoint of each input added, in the order inputs came.
    package private(set) var checkpoints: [Checkpoint] = []
    /// Rows added so far, all tables together.
    package var rowsAdded: Int { tables.values.reduce(0) { $0 + $1.rowsAdded } }
    /// Rows added to table `name`, before repeated keys are combined.
    package func rowsAdded(to name: String) -> Int { tables[name]?.rowsAdded ?? 0 }

    /// Where the keys whose occurrences disagree go, in a run that keeps
    /// record digests.
    package var mixedKeys: MixedKeyLog?

    /// Rows spilled to run files so far, all tables together (those written
    /// aside counted once their run is written).
    package internal(set) var spilledRows = 0

    /// A sorter whose run files go in `directory`. With `aside`, each run is
    /// sorted, encoded, compressed and written on a thread of its own while
    /// the caller fills the next (``spillAside()``): runs as large as one
    /// thread's, in 1.5 × ``SortOptions/memoryBytes``; without it,
    /// ``add(_:)`` does that work itself.
    package init(directory: String, options: SortOptions, aside: Bool = false) {
        self.directory = directory
        self.options = options
        writesAside = aside
    }

    /// Waits for a run still being written aside (a run that ended early).
    deinit { runAside?.worker?.join() }

    /// Where a held row's ordinal keeps its group's sequence (``add(_:)``):
    /// the bits above this many, which order a key's occurrences across
    /// groups; the record's own number is below.
    package static let sequenceShift = 40

    /// The number of the record a sorted row came from: its `ordinal`
    /// without the group's sequence. A store's message that names the
    /// record of a row it refuses reads it so (it said `record
    /// 1099511628526` for record 750).
    package static func record(ofOrdinal ordinal: Int) -> Int { ordinal & (1 << sequenceShift - 1) }

    /// Takes a group's rows (copying them) and its checkpoint; spills every
    /// table when the rows held exceed the budget. O(rows) plus, when it
    /// spills, O(n log n) in the rows held.
    package func add(_ group: BatchGroup) throws(SpillError) {
        sequence += 1
        let base = sequence << Self.sequenceShift
        for batch in group.batches {
            let name = batch.link?.name ?? batch.schema.name
            let table: Table
            if let known = tables[name] {
                table = known
            } else {
                table = Table(batch, bufferBytes: options.memoryBytes / 2)
                tables[name] = table
                names.append(name)
            }
            table.prototype.schema = batch.schema
            if batch.rows.columnCount > table.held.columnCount { table.held.widen(to: batch.rows.columnCount) }
            let before = table.held.byteSize
            var rowStart = before
            for row in 0..<batch.rows.rowCount {
                table.held.append(row: row, of: batch.rows, ordinal: base | batch.rows.ordinals[row])
                let rowEnd = table.held.byteSize
                if rowEnd - rowStart > table.largestRow { table.largestRow = rowEnd - rowStart }
                rowStart = rowEnd
            }
            heldBytes += table.held.byteSize - before
            table.rowsAdded += batch.rows.rowCount
        }
        if let checkpoint = group.checkpoint {
            if let index = checkpoints.firstIndex(where: { $0.input == checkpoint.input }) {
                checkpoints[index] = checkpoint
            } else {
                checkpoints.append(checkpoint)
            }
        }
        if runAside != nil && heldBytes > options.memoryBytes / 2 { try awaitRunAside() }
        if heldBytes > options.memoryBytes {
            if writesAside { try spillAside() } else { try spill() }
        }
    }

    /// The tables in the order to apply them: entity tables, each after the
    /// tables its references point to where the references allow it (a
    /// cycle keeps mapping order), then link tables.
    package var applyOrder: [String] {
        let entities = names.filter { tables[$0]?.prototype.link == nil }
        var ordered: [String] = []
        var visiting: Set<String> = []
        func visit(_ name: String) {
            guard !ordered.contains(name), !visiting.contains(name), let table = tables[name] else { return }
            visiting.insert(name)
            for reference in table.prototype.schema.references { visit(reference.targetTable) }
            ordered.append(name)
        }
        for name in entities { visit(name) }
        return ordered + names.filter { tables[$0]?.prototype.link != nil }
    }

    /// Spills what is held, then merges table `name`'s runs into batches of
    /// about `rows` rows or `bytes` of ``RowArena/byteSize``, whichever comes
    /// first, in key order; a key's rows never straddle two batches, so the
    /// last occurrence still wins inside one.
    package func chunks(of name: String, rows: Int, bytes: Int = .max) throws(SpillError) -> KeyOrderedChunks? {
        if !released {
            try awaitRunAside()
            try spill(releasing: true)
            released = true
        }
        guard let table = tables[name], let file = table.file, !file.runs.isEmpty, let codec else { return nil }
        while file.runs.count > fanIn(of: table) {
            try table.compact(file, fanIn: fanIn(of: table), columnCount: table.held.columnCount, codec: codec)
        }
        let merge = try RunMerge(
            file: file, runs: Array(file.runs.indices), keys: table.keys, columnCount: table.held.columnCount,
            bufferBytes: options.memoryBytes / 2, codec: codec)
        return KeyOrderedChunks(
            merge: merge, prototype: table.prototype, keys: table.keys, columnCount: table.held.columnCount, rows: rows,
            bytes: bytes)
    }

    /// Sorts each table's held rows and writes them as a new run; when
    /// `releasing` (the input is read), the memory that held them is freed.
    private func spill(releasing: Bool = false) throws(SpillError) {
        for name in names {
            guard let table = tables[name] else { continue }
            if table.held.rowCount > 0 {
                spilledRows += try table.writeRun(
                    &table.held, entity: table.prototype.entity, fanIn: fanIn(of: table), directory: directory,
                    codec: try runCodec(), log: mixedKeys)
            }
            if releasing {
                table.held = RowArena(columnCount: table.held.columnCount)
                table.file?.endWriting()
            } else {
                table.held.removeAll()
            }
        }
        heldBytes = 0
    }

    /// How many of `table`'s runs are merged at once: ``SortOptions/fanIn``,
    /// fewer when its rows are large. A merge holds the current row of each
    /// run, so runs × the largest row stay within half the memory budget
    /// (at least two runs). 24 records of three 5 MiB fields: peak RSS 848
    /// MB with 24 runs merged at once; see docs/nightly-sync.md.
    func fanIn(of table: Table) -> Int {
        max(2, min(options.fanIn, (options.memoryBytes / 2) / max(1, table.largestRow)))
    }

    /// The run codec, made on first use.
    func runCodec() throws(SpillError) -> RunCodec {
        if let codec { return codec }
        guard let made = RunCodec() else {
            throw SpillError(
                path: directory, action: "starting the run compression", message: "zstd could not allocate its contexts"
            )
        }
        codec = made
        return made
    }

    /// Row indices by key, ties in arrival order; with `onePerKey` one row
    /// per key (``RowArena/onePerKey(_:keys:combining:)``, which may append
    /// combined rows to `rows`). O(n log n).
    static func sortedRows(
        _ rows: inout RowArena, keys: [Int], onePerKey: Bool, combining: Bool,
        disagreeing: ((RowArena, Int) -> Void)? = nil
    ) -> [Int] {
        let order = byKey(rows, keys: keys)
        guard onePerKey, !keys.isEmpty else { return order }
        guard let disagreeing else { return rows.onePerKey(order, keys: keys, combining: combining) }
        var disagreed: [Int] = []
        let kept = rows.onePerKey(order, keys: keys, combining: combining) { disagreed.append($0) }
        for row in disagreed { disagreeing(rows, row) }
        return kept
    }

    /// Row indices by key, ties in arrival order. O(n log n).
    private static func byKey(_ rows: RowArena, keys: [Int]) -> [Int] {
        var order = Array(0..<rows.rowCount)
        guard !keys.isEmpty else { return order }
        let integers = keys.count == 1 ? integerKeys(rows, column: keys[0]) : nil
        order.sort { left, right in
            let comparison: Int
            if let integers {
                comparison = integers[left] < integers[right] ? -1 : (integers[left] > integers[right] ? 1 : 0)
            } else {
                comparison = rows.compare(row: left, keys, with: right, of: rows)
            }
            return comparison != 0 ? comparison < 0 : left < right
        }
        return order
    }

    /// Each row's key when every row's key `column` holds an integer (the
    /// common case, sorted without looking at cells again); nil otherwise.
    private static func integerKeys(_ rows: RowArena, column: Int) -> [Int64]? {
        var keys: [Int64] = []
        keys.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount {
            guard case .integer(let value) = rows[row, column] else { return nil }
            keys.append(value)
        }
        return keys
    }
}

/// One table's rows merged from its runs, cut into batches in key order.
package final class KeyOrderedChunks {
    private let merge: RunMerge
    private let prototype: Batch
    private let keys: [Int]
    private let columnCount: Int
    private let rows: Int
    private let bytes: Int

    init(merge: RunMerge, prototype: Batch, keys: [Int], columnCount: Int, rows: Int, bytes: Int) {
        self.merge = merge
        self.prototype = prototype
        self.keys = keys
        self.columnCount = columnCount
        self.rows = max(1, rows)
        self.bytes = max(1, bytes)
    }

    /// The next batch, or nil when the table's rows are all out. O(rows
    /// of the batch × log runs).
    package func next() throws(SpillError) -> Batch? {
        try next(reusing: RowArena(columnCount: columnCount))
    }

    /// The next batch, built in `arena` (emptied first, keeping its
    /// capacity, when it has this table's columns; replaced otherwise), of
    /// at most `limit` rows when that is fewer than the chunks' own (but a
    /// key's rows are never split), or nil when the table's rows are all
    /// out. O(rows of the batch × log runs); no allocation once the arena
    /// has grown to a batch's size.
    package func next(reusing arena: consuming RowArena, rows limit: Int = .max) throws(SpillError) -> Batch? {
        let rows = max(1, min(rows, limit))
        var out = arena
        out.removeAll()
        if out.columnCount != columnCount { out = RowArena(columnCount: columnCount) }
        while true {
            // The head's row is read in place, never copied: a copy alive
            // across `advance` made every decode copy the reader's arena.
            guard let head = merge.head else { break }
            if (out.rowCount >= rows || out.byteSize >= bytes)
                && (keys.isEmpty || out.compare(row: out.rowCount - 1, keys, with: 0, of: head.current) != 0)
            {
                break
            }
            out.append(row: 0, of: head.current, ordinal: head.current.ordinals[0])
            try merge.advance()
        }
        guard out.rowCount > 0 else { return nil }
        var batch = prototype
        batch.rows = out
        return batch
    }
}
