import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The parse threads of a run that parses on several cores
/// (``ImportOptions/threads``), and the thread that hands their groups to
/// the store side in input order.
///
/// The parse side cuts each input into items of whole records
/// (``ParseItem``, about ``itemBytes`` each) and hands them to the workers
/// in turn: item i to worker i mod N. Each worker parses its items in order
/// and queues their groups, then a mark that the item is done; the
/// forwarder takes worker 0's results up to its mark, then worker 1's, and
/// so on, so that groups reach the store side's queue in input order with
/// nothing reordered in memory. The first failure in input order is the
/// run's: the forwarder meets it only once every earlier item is forwarded,
/// and then stops every queue. In a run that keeps record digests the
/// workers hash the units of their items, and the forwarder adds them to
/// the run's ``UnitSpill`` in input order, as one parse thread would. In
/// the hash pass of a run that skips, before the parse, they hash the units
/// of hash-only items (``SkipPlan/hashOnWorkers(_:index:workers:into:positions:units:refused:)``)
/// and the forwarder adds their digests to the pass's sorter, in input
/// order, and has an XML document's check read each item there.
/// Memory, bounded whatever the input: per worker one queued item, the item
/// being parsed, the group being filled and one queued group.
final class ParseWorkers {
    /// Input bytes in an item, cut at the next record's start: 1 MiB shared
    /// among the workers, from 64 KiB to 256 KiB an item. Large enough
    /// that placing a parser and cutting a group cost nothing per record
    /// (64 KiB is a hundred-odd events), small enough that the workers'
    /// items and groups stay a few MiB together (16 workers' of 256 KiB
    /// peaked at 86 MiB on 200,000 events, against 56 MiB on one thread).
    let itemBytes: Int
    /// Room reserved in an item past ``itemBytes``: an item is cut at the
    /// first record that starts past ``itemBytes``, so it ends up to a
    /// record beyond it (only a record longer than this grows the buffer).
    /// Reserving ``itemBytes`` alone made almost every item's buffer grow,
    /// and double, at its last record: 512 KiB an item at two to four
    /// workers, 4.7 MB of items at four (massif, 200,000 events).
    static let itemSlack = 16 << 10

    let workers: [ParseWorker]
    private var threads: [Worker] = []
    private let exchange: PipelineExchange
    /// The first failure in input order: an item's, or the store side's
    /// refusal of a group.
    private let failure = Shared<ImportError?>(nil)
    /// Each input's end as the forwarder meets it: `nil`, or the failure
    /// that stopped it.
    private let ends = BlockingQueue<ImportError?>(capacity: 1)
    /// The worker of the next item.
    private var next = 0
    /// Where the units go, in a run that keeps record digests.
    private let unitSpill: UnitSpill?
    /// Where the digests of hash-only items go, during the hash pass of a
    /// run that skips, and what reads the items in order (``hashInto(_:checking:)``).
    private var hashed: DigestSorter?
    private var checked: XMLDocumentCheck?

    /// `count` workers for `compiled` under `options`, forwarding onto
    /// `exchange`'s queue, spilling large values into the run's `spill`;
    /// in a run that keeps record digests, its `recorder`'s secret hashes
    /// the units and its spill keeps them. Nil when the system refuses one
    /// of their threads (those started are stopped).
    init?(
        count: Int, compiled: CompiledMapping, options: ImportOptions, exchange: PipelineExchange,
        spill: ValueSpill, recorder: UnitRecorder?
    ) {
        self.exchange = exchange
        unitSpill = recorder?.spill
        itemBytes = min(256 << 10, max(64 << 10, (1 << 20) / count))
        workers = (0..<count).map { _ in
            ParseWorker(
                compiled: compiled, options: options, spill: spill, cancelled: exchange.cancelled,
                secret: recorder?.secret, spares: exchange.spares)
        }
        do {
            for worker in workers { threads.append(try Worker { worker.run() }) }
            threads.append(try Worker { [self] in forward() })
        } catch {
            stop()
            return nil
        }
    }

    /// Why a run of `compiled` with `options` parses on one thread whatever
    /// ``ImportOptions/threads`` says, or nil when it parses on several.
    static func refusal(_ compiled: CompiledMapping, _ options: ImportOptions) -> String? {
        if options.threads <= 1 { return "one thread" }
        if options.order == .input { return "--order input" }
        if compiled.mappers.contains(where: { $0 is SchemalessMapper }) {
            return "column types inferred as records come"
        }
        if compiled.mappers.contains(where: \.runsHooks) { return "hooks, called in record order" }
        return nil
    }

    /// Hands `item` to the next worker, waiting while its queue is full.
    ///
    /// - Throws: the run's first failure, once the workers stopped.
    func dispatch(_ item: ParseItem) throws(ImportError) {
        guard workers[next].items.push(item) else { throw stopped }
        next = (next + 1) % workers.count
    }

    /// Sends the digests of the hash-only items dispatched from now on to
    /// `sorter` (nil: none are), and the items, in input order, to `check`.
    /// Called between inputs, before the first item is dispatched or once
    /// ``endInput()`` returned: the forwarder reads them only while it
    /// forwards an input's items.
    func hashInto(_ sorter: DigestSorter?, checking check: XMLDocumentCheck? = nil) {
        hashed = sorter
        checked = check
    }

    /// Waits until every item of the current input is parsed and its groups
    /// are on the store side's queue.
    ///
    /// - Throws: the first failure among its items, in input order.
    func endInput() throws(ImportError) {
        for worker in workers where !worker.items.push(nil) { throw stopped }
        next = 0
        guard let end = ends.pop() else { throw stopped }
        if let end { throw end }
    }

    /// Stops the threads and waits for them: items and groups not yet
    /// forwarded are dropped. Idempotent.
    func stop() {
        for worker in workers {
            worker.items.fail()
            worker.results.fail()
        }
        for thread in threads { thread.join() }
        threads = []
    }

    /// The failure that stopped the workers.
    private var stopped: ImportError { failure.value ?? exchange.storeFailure }

    /// The forwarder's loop: each worker's results in turn, groups onto the
    /// store side's queue, until the queues stop or a failure.
    private func forward() {
        var turn = 0
        while let result = workers[turn].results.pop() {
            switch result {
            case .group(let group):
                guard exchange.groups.push(group) else { return fail(exchange.storeFailure) }
            case .units(let units):
                guard let unitSpill else { continue }
                do throws(SpillError) { try units.add(to: unitSpill) } catch { return fail(.spill(error)) }
            case .digests(let entries, let item):
                guard let hashed else { continue }
                do throws(SpillError) { for entry in entries { try hashed.add(entry) } } catch {
                    return fail(.spill(error))
                }
                checked?.read(item)
            case .itemDone:
                turn = (turn + 1) % workers.count
            case .inputEnded:
                // Every other worker's items are forwarded: each has only its end mark left.
                for (index, worker) in workers.enumerated() where index != turn { _ = worker.results.pop() }
                turn = 0
                _ = ends.push(nil)
            case .failed(let error):
                return fail(error)
            }
        }
    }

    private func fail(_ error: ImportError) {
        failure.set(error)
        _ = ends.push(error)
        for worker in workers {
            worker.items.fail()
            worker.results.fail()
        }
    }
}
