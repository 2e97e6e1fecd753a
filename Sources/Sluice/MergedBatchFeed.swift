import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The key-ordered apply's second thread: it merges each table's sorted runs
/// into batches (reading and decoding the run files) while the store thread
/// writes the previous batch to the store, so the two costs overlap instead of
/// adding up. On 200,000 generated events the merge was a third of the
/// apply phase.
///
/// Memory: the sorter's merge buffers, plus one batch waiting in the
/// hand-off and the one being built; batches are bounded by bytes as well
/// as rows so that the three in flight stay small.
final class MergedBatchFeed {
    /// What the store thread receives, in order.
    enum Item {
        /// The next batch of a table; `startsTable` for its first.
        case batch(Batch, startsTable: Bool)
        /// The table whose batches came last has no more.
        case tableEnd
    }

    private enum Message {
        case item(Item)
        case failed(SpillError)
    }

    private let queue = BlockingQueue<Message>(capacity: 1)
    private var worker: Worker?
    /// Arenas of applied batches, refilled by the merge (see ``recycle(_:)``).
    private let spares: ArenaPool
    /// The bound the store side measured last (``fitCache(_:)``), which the
    /// merge reads before it cuts each batch of the table it names.
    private let fitted = Shared<CacheFittedRows?>(nil)

    /// Starts merging `sorter`'s tables in ``KeyOrderSorter/applyOrder`` into
    /// batches of about `rows` rows or `bytes` bytes; the batches of the
    /// tables in `fitted` hold ``CacheFittedRows/firstRows`` rows until the
    /// store side measures one (``fitCache(_:)``). The sorter must not be
    /// used by any other thread until ``stop()`` returns.
    ///
    /// - Throws: ``SpillError`` when the system gives no thread for the merge.
    init(sorter: KeyOrderSorter, rows: Int, bytes: Int, fitted fittedFromFirst: Set<String>) throws(SpillError) {
        // A batch of a few huge rows (records of several MiB) is not kept.
        let spares = ArenaPool(capacity: 2, maxBytes: 2 * bytes)
        self.spares = spares
        let queue = queue
        let fitted = fitted
        let merge = {
            /// The rows of `name`'s next batch: its measured bound, or before
            /// one is measured the first batches' or the feed's.
            func limit(_ name: String) -> Int {
                if let bound = fitted.value, bound.table == name { return bound.rows }
                return fittedFromFirst.contains(name) ? CacheFittedRows.firstRows : rows
            }
            do throws(SpillError) {
                for name in sorter.applyOrder {
                    guard let chunks = try sorter.chunks(of: name, rows: rows, bytes: bytes) else { continue }
                    var first = true
                    while let batch = try chunks.next(
                        reusing: spares.take() ?? RowArena(columnCount: 0), rows: limit(name))
                    {
                        guard queue.push(.item(.batch(batch, startsTable: first))) else { return }
                        first = false
                    }
                    guard queue.push(.item(.tableEnd)) else { return }
                }
            } catch {
                _ = queue.push(.failed(error))
            }
            queue.close()
        }
        do {
            worker = try Worker(merge)
        } catch {
            throw SpillError(path: sorter.directory, action: "starting the merge of the sorted runs", errno: error.code)
        }
    }

    /// The next item, waiting for the merge; nil when every table is out.
    ///
    /// - Throws: ``SpillError`` when a run file could not be read.
    func next() throws(SpillError) -> Item? {
        switch queue.pop() {
        case .item(let item): return item
        case .failed(let error): throw error
        case nil: return nil
        }
    }

    /// Hands back the rows of a batch ``next()`` returned, once applied,
    /// for the merge to fill again. On the 200,000-event re-import the
    /// merge thread had spent a fifth of its time in page faults on fresh
    /// batch buffers.
    func recycle(_ rows: consuming RowArena) {
        spares.give(rows)
    }

    /// Cuts the later batches of `bound`'s table to its rows (a batch
    /// already cut keeps its own). Safe to call from the store thread while
    /// the merge runs.
    func fitCache(_ bound: CacheFittedRows) {
        fitted.set(bound)
    }

    /// Stops the merge (if still running) and waits for its thread.
    func stop() {
        queue.fail()
        worker?.join()
        worker = nil
    }

    deinit { stop() }
}
