import SluiceBatching
import SluiceInput
import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// A run that parses only the units whose digests the store did not keep
/// (docs/record-digests.md, "A run that skips"). Before the run parses
/// anything, ``plan(_:store:)``:
/// 1. reads every input once, cutting it into units and hashing each;
/// 2. joins the digests, sorted, with the store's units in digest order:
///    units it kept are skipped (unless pinned), their keys counted as seen
///    by a run that sweeps (``SkippedKeys``) unless it sweeps their entity
///    in proportion to the change, new ones selected, and the kept units the
///    inputs no longer have are ``removed``, their keys gathered for the
///    sweeps in proportion, beside the keys other writers voided;
/// 3. parses the selected units without writing them (a probe), to learn
///    the keys they produce and what they contribute to each;
/// 4. selects the kept units that produce one of those keys with another
///    contribution, since then the order of the contributions decides the
///    row, and records such keys as mixed (their units are pinned); drops
///    from the candidates (the removed units' keys and the voided ones)
///    those a skipped unit produces too, and has the store record the rest
///    (``ImportStore/markRemoved(_:)``): the only keys the sweeps in
///    proportion may delete.
/// The run then parses ``selection``. Memory: the sorters' budgets, a bit
/// per unit, the keys of the selected units (at most
/// ``ProbedKeys/maxHeld``; past that spilled sorted to disk and merged with
/// the kept units' keys) and the candidates of the entities
/// swept in proportion (at most ``maxRemovedKeys``; past that their skipped
/// keys are recorded as seen, as for any other entity), and during the join
/// the voided keys' fingerprints (``voidedKeys(_:)``).
final class SkipPlan {
    /// The keys of removed units and voided keys the plan holds for the
    /// sweeps in proportion (about 100 bytes each); past it those entities'
    /// skipped keys are recorded as seen instead, in one more scan of the
    /// units.
    static let maxRemovedKeys = 100_000

    let compiled: CompiledMapping
    let options: ImportOptions
    let secret: [UInt8]
    let directory: String
    private(set) var selection: UnitSelection
    /// The digests of the kept units the inputs no longer have, on disk
    /// (``DigestSorter``, a 1 MiB budget): a run that replaces a set of
    /// 2,000,000 units with a file of a few had held them all, with their
    /// copies in the save, at 313 MB peak.
    let removed: DigestSorter
    /// Keys whose contributions disagree (``UnitKeys/identity(_:)``).
    private(set) var mixedKeys: Set<[UInt8]> = []
    /// Units skipped: those kept and not selected.
    private(set) var skipped = 0
    /// Units of each input (pass 1).
    private(set) var unitCounts: [Int] = []
    /// Why an input could not be cut into units (pass 1), as
    /// ``UnitRecorder/refusal`` says it, or why its units did not end (it
    /// ends inside one, or inside an element around them): then every unit
    /// is selected.
    private(set) var refusal: String?
    /// Where the units of each input that the probe and the parse may read
    /// from their places lie (a file, not compressed, of units without
    /// context: ``UnitPositions``), as the hash pass found them.
    private(set) var places: UnitPositions?
    /// The entities the store's set covered when the run started
    /// (``DigestSet/covered``).
    let covered: Set<String>
    /// Per entity: whether the run sweeps it in proportion to the change
    /// (``DigestPolicy/sweepsInProportion(_:covered:)``).
    let proportional: [Bool]
    /// Per entity: the candidates of its sweep, the keys of its that removed
    /// units produce or that other writers voided since the set's last save,
    /// less those a skipped unit produces (once
    /// ``close(over:kept:store:fallback:)`` has run); empty but for entities
    /// swept in proportion.
    var removedKeys: [Set<[UInt8]>]
    private var removedKeyCount = 0
    /// Whether the candidates exceeded ``maxRemovedKeys`` or did not read:
    /// the entities swept in proportion record their skipped keys as seen
    /// instead.
    private(set) var removedOverflow = false
    /// Per entity: whether a removed unit produced a key of it or another
    /// writer wrote one (a voided key): rows that no unit of the run
    /// produces may be left in its table unless the run sweeps it.
    private(set) var touched: [Bool]
    /// Per entity swept in proportion: whether a skipped unit produces a key
    /// of it (then its sweep is one in proportion; else the keys the run's
    /// merges see are all it produces).
    private var skippedProduce: [Bool]
    /// Entities swept in proportion no skipped unit has been found to
    /// produce yet.
    private var unmet: Int

    init(
        compiled: CompiledMapping, options: ImportOptions, secret: [UInt8], directory: String, inputs: Int,
        covered: Set<String>
    ) {
        self.compiled = compiled
        self.options = options
        self.secret = secret
        self.directory = directory
        self.covered = covered
        removed = DigestSorter(directory: directory, memoryBytes: 1 << 20)
        selection = UnitSelection(inputs: inputs)
        proportional = DigestPolicy.sweepsInProportion(compiled, covered: covered)
        removedKeys = Array(repeating: [], count: compiled.mappers.count)
        touched = Array(repeating: false, count: compiled.mappers.count)
        skippedProduce = touched
        unmet = proportional.filter { $0 }.count
    }

    /// The entities the set still covers when the run has saved it, unless
    /// it swept them or made their tables: those covered at its start that
    /// no removed unit produced a key of and no other writer wrote a key of.
    var stillCovered: Set<String> {
        Set(compiled.mappers.indices.filter { !touched[$0] }.map { compiled.mappers[$0].schema.name })
            .intersection(covered)
    }

    /// An input of the run: its path, its format, and its spool when it is
    /// a stream (``InputSpool``), which the plan reads in its place.
    typealias PlannedInput = (name: String, format: InputFormat, spool: InputSpool?)

    /// Plans the run over `inputs` against the units `store` kept, hashing
    /// the units of JSON inputs on the parse `workers` when the run has them.
    func plan(_ inputs: [PlannedInput], store: any ImportStore, workers: ParseWorkers?) throws(ImportError) {
        let kept = DigestSorter(directory: directory)
        let hashed = try hashUnits(inputs, workers: workers)
        // An input not cut into units is parsed whole: so is every other.
        if refusal != nil { return selectAll(inputs) }
        let sorted: SortedDigests
        do { sorted = try hashed.sorted() } catch { throw .spill(error) }
        do {
            // Held through the join only: the probe and the parse do not hold them beside the candidates.
            let voided: Set<Int>?
            do { voided = try voidedKeys(store) } catch { throw .store(error) }
            // Keys other writers wrote that cannot be told: any table may hold rows no unit produces.
            if voided == nil { touched = touched.map { _ in true } }
            try join(
                sorted, store: store, kept: kept, voided: voided,
                seen: SkippedKeys(store: store, compiled: compiled, among: proportional.map { !$0 }))
        }
        // Ended before the probe: once spilled, its entries are not held while the probe parses.
        let skippedUnits: SortedDigests
        do { skippedUnits = try kept.sorted() } catch { throw .spill(error) }
        var probed = ProbedKeys(directory: directory, secret: secret)
        // No unit kept: every unit is parsed already, and no kept one can be selected.
        if skipped == 0 { return selectAll(inputs) }
        if selection.count > 0 {
            // Every unit parsed: the merges see every key, and every sweep is a full one.
            guard let found = try probe(inputs) else { return selectAll(inputs) }
            probed = found
        }
        let fallback =
            removedOverflow ? SkippedKeys(store: store, compiled: compiled, among: proportional) : nil
        if selection.count > 0 || fallback != nil || removedKeys.contains(where: { !$0.isEmpty }) {
            try close(over: probed, kept: skippedUnits, store: store, fallback: fallback)
        }
        try recordRemoved(store)
    }

    /// Has the store record, for each entity swept in proportion that a
    /// skipped unit produces, the keys its sweep may delete
    /// (``removedKeys``); nothing when they overflowed.
    private func recordRemoved(_ store: any ImportStore) throws(ImportError) {
        guard !removedOverflow else { return }
        var candidates: [(schema: TableSchema, keys: RowArena)] = []
        for entity in proportional.indices where proportional[entity] && skippedProduce[entity] {
            let schema = compiled.mappers[entity].schema
            let columns = Array(schema.keyColumns.indices)
            var keys = RowArena(columnCount: columns.count)
            // Each read as a key row once already (``noteRemoved(_:)``).
            for key in removedKeys[entity] { _ = UnitKeys.appendKeyRow(key, columns: columns, to: &keys) }
            candidates.append((schema, keys))
        }
        // Recorded: the parse that follows need not hold them.
        removedKeys = removedKeys.map { _ in [] }
        guard !candidates.isEmpty else { return }
        do { try store.markRemoved(candidates) } catch { throw .store(error) }
    }

    /// Notes the keys of a removed unit as candidates
    /// (``noteCandidate(_:_:)``); keys that do not read overflow, and every
    /// entity is touched.
    private func noteRemoved(_ unit: StoredUnit) {
        let readable = UnitKeys.forEach(unit.keys, digest: unit.digest) { entry in
            if entry.table < touched.count { noteCandidate(entry.table, entry.key) }
        }
        if !readable {
            overflow()
            touched = touched.map { _ in true }
        }
    }

    /// Notes `key` of entity `entity`, which a removed unit produced or
    /// another writer voided: the entity is ``touched``, and for one swept
    /// in proportion the key joins its candidates (``removedKeys``), checked
    /// to read as a key row. A key that does not read, or one too many,
    /// overflows.
    private func noteCandidate(_ entity: Int, _ key: [UInt8]) {
        touched[entity] = true
        guard proportional[entity], !removedOverflow else { return }
        let columns = Array(compiled.mappers[entity].schema.keyColumns.indices)
        var row = RowArena(columnCount: columns.count)
        guard UnitKeys.appendKeyRow(key, columns: columns, to: &row) else { return overflow() }
        if removedKeys[entity].insert(key).inserted { removedKeyCount += 1 }
        if removedKeyCount > Self.maxRemovedKeys { overflow() }
    }

    /// The candidates overflowed (``removedOverflow``): none is held.
    private func overflow() {
        removedOverflow = true
        removedKeys = removedKeys.map { _ in [] }
    }

    /// Notes which entities swept in proportion a skipped unit produces,
    /// until every one is met.
    private func noteSkipped(_ unit: StoredUnit) {
        _ = UnitKeys.forEach(unit.keys, digest: unit.digest) { entry in
            guard entry.table < proportional.count, proportional[entry.table], !skippedProduce[entry.table] else {
                return
            }
            skippedProduce[entry.table] = true
            unmet -= 1
        }
    }

    /// Payload of unit `ordinal` of input `input` in the sorters.
    static func payload(input: Int, ordinal: Int) -> UInt64 { UInt64(input) << 40 | UInt64(ordinal) }
    private static func unit(of payload: UInt64) -> (input: Int, ordinal: Int) {
        (Int(payload >> 40), Int(payload & (1 << 40 - 1)))
    }

    /// Reads every input, cutting it into units and hashing each as the
    /// run's ``UnitRecorder`` does (a recorder that parses nothing), or,
    /// in a run with parse `workers`, on them
    /// (``hashOnWorkers(_:index:workers:into:positions:units:refused:)``). Sets
    /// ``refusal`` when the scanner cannot cut an input, finds it ends
    /// inside a unit or an element around them, or the input cannot be read
    /// to its end (a compressed stream cut short or damaged): the parse of
    /// every unit then meets the error where a full run does.
    private func hashUnits(_ inputs: [PlannedInput], workers: ParseWorkers?) throws(ImportError) -> DigestSorter {
        let sorter = DigestSorter(directory: directory)
        let recorder = UnitRecorder(secret: secret, directory: directory)
        if inputs.contains(where: placeable) {
            do { places = try UnitPositions(directory: directory) } catch { throw .spill(error) }
        }
        var scanRefusal: String?
        for (index, input) in inputs.enumerated() {
            let positions = placeable(input) ? places : nil
            positions?.begin(input: index)
            var compression = Compression.none
            var units = 0
            do {
                if let workers {
                    var refused: String?
                    defer { scanRefusal = scanRefusal ?? refused }
                    compression = try hashOnWorkers(
                        input, index: index, workers: workers, into: sorter, positions: positions, units: &units,
                        refused: &refused)
                } else {
                    compression = try hashHere(
                        input, index: index, recorder: recorder, into: sorter, positions: positions, units: &units)
                }
            } catch {
                // An input that ends inside an element or structure, or that
                // cannot be read to its end.
                switch error {
                case .parse(let error): refusal = refusal ?? "\(error)"
                case .input(let error): refusal = refusal ?? "\(error)"
                default: throw error
                }
            }
            unitCounts.append(units)
            // An input that failed leaves a refusal: no unit is read at its place.
            do throws(SpillError) { try positions?.end(complete: compression == .none) } catch {
                throw .spill(error)
            }
        }
        refusal = refusal ?? recorder.refusal ?? scanRefusal
        return sorter
    }

    /// Reads `input` (number `index`) on this thread, cutting it into units
    /// and hashing each with `recorder` into `sorter`, their places to
    /// `positions`, the ordinal of the last unit started to `units`.
    /// Returns its compression.
    private func hashHere(
        _ input: PlannedInput, index: Int, recorder: UnitRecorder, into sorter: DigestSorter,
        positions: UnitPositions?, units: inout Int
    ) throws(ImportError) -> Compression {
        defer { units = recorder.unitsSeen }
        recorder.positions = positions
        let check = documentCheck(input)
        recorder.blanksAll = check != nil
        recorder.unitEnded = { unit throws(ImportError) in
            let entry = DigestEntry(
                digest: unit.digest, payload: Self.payload(input: index, ordinal: recorder.unitsSeen))
            do throws(SpillError) { try sorter.add(entry) } catch { throw .spill(error) }
        }
        try recorder.begin(
            name: input.name, input: index, compiled: compiled, multipleValues: multipleValues(input.format))
        let compression = try read(input) { chunk throws(ImportError) in
            try recorder.feed(chunk) { piece throws(ImportError) in
                // An input the scanner refused is parsed whole by the run: not checked here.
                if recorder.refusal == nil { try check?.feed(piece) }
            } blank: { piece, starts, ends throws(ImportError) in
                try check?.feed(skipping: piece, starts: starts, ends: ends)
            } reposition: { _, _ throws(ImportError) in
            }
        }
        if let check, recorder.refusal == nil {
            try recorder.flushHeld { piece throws(ImportError) in try check.feed(piece) }
            try check.finish()
        }
        try recorder.end()
        return compression
    }

    /// Whether the probe and the parse may read `input`'s selected units
    /// from their places: a file (not a spooled stream, whose parse follows
    /// every byte for a resume) of JSON values that need no context, or of
    /// XML (``UnitPositions+XML``). Its places are kept only if it is not
    /// compressed either.
    func placeable(_ input: PlannedInput) -> Bool {
        input.spool == nil && (compiled.documentKind == .xml || multipleValues(input.format))
    }

    /// The places of input `index`'s units, when its selected units are read
    /// from them: the hash pass kept them and found every input whole.
    func places(of index: Int) -> UnitPositions? {
        guard refusal == nil, let places, places.has(input: index) else { return nil }
        return places
    }

    /// Merges the run's sorted digests with the store's units: selects new
    /// and pinned units (those that produce a key of `voided`, the
    /// fingerprints of ``voidedKeys(_:)``: see ``trusts(_:voided:)``),
    /// sends the skipped ones to `kept` and their keys to `seen` (a run that
    /// sweeps), lists the removed.
    private func join(
        _ run: SortedDigests, store: any ImportStore, kept: DigestSorter, voided: Set<Int>?,
        seen: SkippedKeys?
    ) throws(ImportError) {
        var failure: SpillError?
        var next: DigestEntry?
        do { next = try run.nextEntry() } catch { throw .spill(error) }
        do {
            try store.forEachUnit { (unit) throws(StoreError) in
                do throws(SpillError) {
                    while let entry = next, entry.digest < unit.digest {
                        select(entry.payload)
                        next = try run.nextEntry()
                    }
                } catch {
                    failure = failure ?? error
                    return
                }
                guard next?.digest == unit.digest else {
                    do throws(SpillError) { try removed.add(DigestEntry(digest: unit.digest, payload: 0)) } catch {
                        failure = failure ?? error
                    }
                    noteRemoved(unit)
                    return
                }
                // A unit skipped counts its keys as seen; one whose keys do not read is parsed.
                var skips = !unit.pinned && Self.trusts(unit, voided: voided)
                if skips, let seen { skips = try seen.add(unit) }
                if skips && unmet > 0 { noteSkipped(unit) }
                do throws(SpillError) {
                    while let entry = next, entry.digest == unit.digest {
                        if skips {
                            try kept.add(entry)
                            skipped += 1
                        } else {
                            select(entry.payload)
                        }
                        next = try run.nextEntry()
                    }
                } catch {
                    failure = failure ?? error
                }
            }
            try seen?.finish()
        } catch {
            throw .store(error)
        }
        if let failure { throw .spill(failure) }
        do {
            while let entry = next {
                select(entry.payload)
                next = try run.nextEntry()
            }
        } catch {
            throw .spill(error)
        }
    }

    /// The fingerprints (``fingerprint(table:key:)``) of the keys another
    /// writer voided in `store` since the set's last save, of the tables
    /// this run's mapping writes; each key of an entity is noted as a
    /// candidate of its sweep (``noteCandidate(_:_:)``), sharing its bytes.
    /// Nil when they cannot be matched (too many, or a key of a type whose
    /// stored form may differ from the mapping's): then no kept unit is
    /// trusted. Memory, held through the join only: at most
    /// ``ImportPipeline/maxVoidedKeys`` fingerprints, 8 bytes each in the set
    /// (16 at its worst load), where an identity, an array of its own, took
    /// 54 for the whole run (massif, the 200,000-event change file's 6,316
    /// voided keys: 342 KB held to the run's end, now none past 16 KB at any
    /// detailed snapshot). Each key of the store's list is let go once read
    /// (a candidate of the sweep keeps its bytes).
    private func voidedKeys(_ store: any ImportStore) throws(StoreError) -> Set<Int>? {
        guard var keys = try store.voidedKeys(limit: ImportPipeline.maxVoidedKeys) else { return nil }
        guard !keys.isEmpty else { return [] }
        var tables: [String: (index: Int, types: [AttributeType])] = [:]
        for (index, mapper) in compiled.mappers.enumerated() {
            tables[mapper.schema.name] = (index, mapper.schema.keyColumns.map { mapper.schema.columns[$0].type })
        }
        for (index, link) in compiled.links.enumerated() {
            tables[link.name] = (compiled.mappers.count + index, link.sourceColumns.map(\.type))
        }
        var fingerprints: Set<Int> = []
        fingerprints.reserveCapacity(keys.count)
        while let key = keys.popLast() {
            // A table this mapping does not write: none of its units produce the key.
            guard let table = tables[key.table] else { continue }
            // A store reads back integer and text keys as the mapping binds them.
            guard table.types.allSatisfy({ $0 == .integer || $0 == .string }) else { return nil }
            fingerprints.insert(key.key.withUnsafeBytes { Self.fingerprint(table: table.index, key: $0) })
            if table.index < compiled.mappers.count { noteCandidate(table.index, key.key) }
        }
        return fingerprints
    }

    /// The fingerprint of `key` (its cells encoded) in table `table`: a hash
    /// under this process's seed. Two keys may share one (about one chance
    /// in 2^64 a pair): a kept unit whose key shares a voided key's is parsed
    /// again, as if it produced it, which costs its parse and changes no row.
    private static func fingerprint(table: Int, key: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(table)
        hasher.combine(bytes: key)
        return hasher.finalize()
    }

    /// Whether a kept unit may be skipped as far as the keys `voided`
    /// (``voidedKeys(_:)``) go: it produces none of their fingerprints.
    /// O(its keys) when some are voided, with no allocation.
    private static func trusts(_ unit: StoredUnit, voided: Set<Int>?) -> Bool {
        guard let voided else { return false }
        guard !voided.isEmpty else { return true }
        var produces = false
        let readable = UnitKeys.forEachKey(unit.keys, digest: unit.digest) { table, key, _ in
            if voided.contains(fingerprint(table: table, key: key)) { produces = true }
        }
        return readable && !produces
    }

    /// Whether any unit of input `input` is selected.
    func hasSelected(input: Int) -> Bool {
        (1...max(1, unitCounts[input])).contains { selection.contains(input: input, ordinal: $0) }
    }

    /// Selects a kept unit after all (the closure over disagreeing keys),
    /// unless it is selected already (a unit that meets several spilled keys
    /// of the probe's is handed over for each).
    func reselect(_ payload: UInt64) {
        let unit = Self.unit(of: payload)
        guard !selection.contains(input: unit.input, ordinal: unit.ordinal) else { return }
        select(payload)
        skipped -= 1
    }

    /// Records the keys whose contributions disagree.
    func mark(mixed keys: Set<[UInt8]>) { mixedKeys = keys }

    /// Selects every unit: the run parses them all.
    func selectAll(_ inputs: [PlannedInput]) {
        for input in inputs.indices where unitCounts[input] > 0 {
            for ordinal in 1...unitCounts[input] { selection.insert(input: input, ordinal: ordinal) }
        }
        skipped = 0
    }

    private func select(_ payload: UInt64) {
        let unit = Self.unit(of: payload)
        selection.insert(input: unit.input, ordinal: unit.ordinal)
    }
}
