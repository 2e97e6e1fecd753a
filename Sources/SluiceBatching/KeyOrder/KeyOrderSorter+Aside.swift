@_spi(Machinery) import SluiceRecords

/// Runs written aside: in a run that parses on several threads the sorter's
/// thread (the store thread) only copies rows into its arenas; when they
/// hold the budget it hands them to a thread of their own, which sorts,
/// encodes, compresses and writes them as one run per table, and fills new
/// arenas meanwhile, up to half the budget while the run is being written
/// (past it, it waits for the run). One run is written at a time, so each
/// run still covers a contiguous stretch of the input: the occurrences of a
/// key it combines are neighbours in input order, as in a run written in
/// place. Memory: at most 1.5 × ``SortOptions/memoryBytes`` of rows (a
/// written run's arenas are freed, not kept to fill next). Runs of half the
/// budget each had doubled the runs (about 420 a table at 2,000,000 events
/// against 210), past ``SortOptions/fanIn``: a compaction of 256 runs
/// while the input was read cost 4.9 s of CPU and 6 MiB of merge buffers at
/// the run's peak. docs/performance.md, "Runs written aside".
extension KeyOrderSorter {
    /// Hands the rows held to a new thread that writes them as one run per
    /// table, after waiting for the run before (whose failure it throws).
    /// O(tables) here; the run's O(n log n) on the other thread.
    func spillAside() throws(SpillError) {
        let codec = try runCodec()
        try awaitRunAside()
        var parts: [RunAside.Part] = []
        for name in names {
            guard let table = tables[name], table.held.rowCount > 0 else { continue }
            var next = RowArena(columnCount: table.held.columnCount)
            swap(&next, &table.held)
            parts.append(
                RunAside.Part(table: table, rows: next, entity: table.prototype.entity, fanIn: fanIn(of: table)))
        }
        heldBytes = 0
        let run = RunAside(parts: parts, directory: directory, codec: codec, log: mixedKeys)
        do {
            runAside = (try Worker { run.write() }, run)
        } catch {
            // Without a thread the run is written here, as without workers.
            run.write()
            runAside = (nil, run)
        }
    }

    /// Waits for the run being written aside, if any, counts its rows and
    /// frees its arenas.
    ///
    /// - Throws: the error that stopped its writing.
    func awaitRunAside() throws(SpillError) {
        guard let (worker, run) = runAside else { return }
        worker?.join()
        runAside = nil
        if let failure = run.failure { throw failure }
        spilledRows += run.written
    }
}

/// One run written aside: each table's rows, sorted and written by
/// ``KeyOrderSorter/Table/writeRun(_:entity:fanIn:directory:codec:log:)``
/// on the thread that runs ``write()``, read by the sorter once that thread
/// is joined. The rows belong to the writing thread until then.
final class RunAside: @unchecked Sendable {
    /// One table's share of the run, with what its writing needs copied
    /// from the table at the hand-over (the sorter goes on changing it).
    struct Part {
        let table: KeyOrderSorter.Table
        var rows: RowArena
        let entity: Int
        let fanIn: Int
    }

    private(set) var parts: [Part]
    private let directory: String
    private let codec: RunCodec
    private let log: MixedKeyLog?
    /// Rows written, once ``write()`` returned.
    private(set) var written = 0
    /// Why ``write()`` stopped early, if it did.
    private(set) var failure: SpillError?

    init(parts: [Part], directory: String, codec: RunCodec, log: MixedKeyLog?) {
        self.parts = parts
        self.directory = directory
        self.codec = codec
        self.log = log
    }

    /// Writes each table's rows as its next run and frees them; stops at
    /// the first error.
    func write() {
        do throws(SpillError) {
            for index in parts.indices {
                // The table, entity and fan-in read one by one: a copy of the
                // part would share its rows, and sorting them would copy them.
                let (table, entity, fanIn) = (parts[index].table, parts[index].entity, parts[index].fanIn)
                written += try table.writeRun(
                    &parts[index].rows, entity: entity, fanIn: fanIn, directory: directory, codec: codec, log: log)
                parts[index].rows = RowArena(columnCount: 0)
            }
        } catch {
            failure = error
        }
    }
}
