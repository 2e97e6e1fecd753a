import SluiceBatching
import SluiceInput
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The record digests of a run (docs/record-digests.md): whether it keeps
/// them, starting the store's set before the first write, saving the units
/// once the rows are written.
extension ImportPipeline {
    /// The store's valid set that a run under another fingerprint keeps,
    /// voiding the keys it writes: its units and its secret.
    typealias VoidedSet = (units: Int, secret: [UInt8])

    /// Units saved per transaction at the end of a run.
    static let unitsPerSave = 10_000

    /// How a run starts its record digests (``recordDigests(_:_:_:formats:directory:)``).
    struct DigestStart {
        /// What the parse side feeds the units to, nil when the run keeps no digests.
        var recorder: UnitRecorder?
        /// The plan of a run that skips the units the store kept.
        var plan: SkipPlan?
        /// Why the run keeps none, when it voided a set the next run would
        /// have trusted (a warning of its report).
        var refusal: String?
        /// The set a run under another fingerprint keeps, voiding the keys it writes.
        var voiding: VoidedSet?
        /// Why the run parses every record though the store keeps digests
        /// (``ImportReport/fullPass``), nil when it skips what it can or was
        /// asked to parse everything.
        var fullPass: String?
    }

    /// Decides whether the run keeps record digests in `store`: if so, starts
    /// the store's set (invalid until the units are saved) and returns the
    /// recorder the parse side feeds, with the plan of a run that skips the
    /// units the store kept when its set is valid and made under the same
    /// fingerprint; if not, voids the set when the run writes, and returns
    /// why not.
    static func recordDigests(
        _ store: any ImportStore, _ compiled: CompiledMapping, _ options: ImportOptions, formats: [InputFormat?],
        directory: String
    ) throws(ImportError) -> DigestStart {
        guard store.keepsDigests else { return DigestStart() }
        do throws(StoreError) {
            guard let refusal = DigestPolicy.refusal(compiled, options, formats: formats) else {
                return try keep(store, compiled, options, inputs: formats.count, directory: directory)
            }
            let fullPass = options.noSkip ? nil : "record digests are off (\(refusal))"
            // Only a run that voids a set the next run would have trusted says
            // so (a dry run too: its transaction, voiding included, rolls back).
            guard try store.digestSet()?.valid == true else { return DigestStart(fullPass: fullPass) }
            try store.voidDigests()
            return DigestStart(refusal: refusal, fullPass: fullPass)
        } catch {
            throw .store(error)
        }
    }

    /// Starts the digests of a run that keeps them: a run that skips when the
    /// store's set is valid and made under the same fingerprint; under
    /// another fingerprint, a run that keeps that set and voids the keys it
    /// writes (``voiding``: a change file under its own mapping), where
    /// the store can log them; else one that parses every unit and makes the
    /// set anew, and says why when the store had a set.
    private static func keep(
        _ store: any ImportStore, _ compiled: CompiledMapping, _ options: ImportOptions, inputs: Int, directory: String
    ) throws(StoreError) -> DigestStart {
        let fingerprint = DigestPolicy.fingerprint(compiled, options)
        let kept = try store.digestSet()
        let secret = kept?.secret ?? newSecret()
        let skips = kept?.valid == true && kept?.fingerprint == fingerprint
        let recorder = UnitRecorder(secret: secret, directory: directory)
        // A sweep deletes after the units are saved: its keys would not be voided.
        let sweeps = compiled.mappers.contains { $0.schema.deleteMissing }
        if let kept, kept.valid, !skips, !sweeps, try store.startVoidingWrites(writtenTables(compiled)) {
            return DigestStart(recorder: recorder, voiding: (kept.units, secret))
        }
        try store.startDigests(fingerprint: fingerprint, secret: secret, fresh: !skips)
        guard skips else {
            return DigestStart(recorder: recorder, fullPass: kept.map { $0.valid ? madeAnew : notValid })
        }
        let plan = SkipPlan(
            compiled: compiled, options: options, secret: secret, directory: directory, inputs: inputs,
            covered: kept?.covered ?? [])
        return DigestStart(recorder: recorder, plan: plan)
    }

    /// Why a run that keeps digests parsed every record: the store's set
    /// was made under another fingerprint.
    static let madeAnew =
        "the store's record digests were made under another mapping, sluice version or options; this run made them anew"

    /// Why a run that keeps digests parsed every record: the store's set is
    /// not valid.
    static let notValid =
        "the store's record digests are not valid (an earlier run voided them or did not finish); this run made them anew"

    /// The most keys a set keeps voided (the next run that skips holds them
    /// in memory): a run that would void more, or more than half as many as
    /// the set has units, or that read half as many units as the set has (a
    /// dump under a new mapping, not a change file), makes its own set
    /// instead.
    static let maxVoidedKeys = 1_000_000

    /// The tables a run of `compiled` writes, with their keys: what
    /// ``ImportStore/startVoidingWrites(_:)`` logs.
    private static func writtenTables(_ compiled: CompiledMapping) -> [WrittenTable] {
        compiled.mappers.map { mapper in
            WrittenTable(
                name: mapper.schema.name, keyColumns: mapper.schema.keyColumns.map { mapper.schema.columns[$0].name })
        } + compiled.links.map { WrittenTable(name: $0.name, keyColumns: $0.sourceColumns.map(\.name)) }
    }

    /// Before the parse of a run that skips: reads each of `sources` that
    /// cannot be read twice (standard input, a pipe) into an ``InputSpool``,
    /// plans which units the run parses (``SkipPlan``) and hands the choice
    /// to the parse side. Returns the spools, by input; none in a run that
    /// does not skip, which reads each source once as it parses.
    func planSkipping(
        _ sources: [(path: String, source: ByteSource, format: InputFormat)], cancellation: Flag
    ) throws(ImportError) -> [InputSpool?] {
        guard let plan = skipPlan, let recorder = parseSide.recorder else { return sources.map { _ in nil } }
        var inputs: [SkipPlan.PlannedInput] = []
        for (path, source, format) in sources {
            let spool =
                Input.isStream(path)
                ? try InputSpool(
                    source, directory: plan.directory, chunkSize: options.chunkSize, cancellation: cancellation)
                : nil
            inputs.append((path, format, spool))
        }
        try plan.plan(inputs, store: store, workers: parseSide.workers)
        recorder.selection = plan.selection
        return inputs.map(\.spool)
    }

    /// Parses input `index` (called `name`, of `format`, `size` bytes) of a
    /// run that skips from the places of its selected units, when the plan
    /// kept them (``SkipPlan/places(of:)``): the rest of the file is not read
    /// again. The units are parsed on this thread, in a run with parse
    /// workers too: cutting items for them would read and scan the whole
    /// file once more for the few units a run at places parses (at 200,000
    /// events, `--threads 2` against 1 on the next day: docs/performance.md).
    /// Returns false, having read nothing, when the input is to be read whole.
    func parsePlaced(_ index: Int, name: String, format: InputFormat, size: Int64?) throws(ImportError) -> Bool {
        guard let plan = skipPlan, let places = plan.places(of: index), let size,
            let selection = parseSide.recorder?.selection
        else { return false }
        try parseSide.beginInput(name: name, format: format, compressed: false, onWorkers: false)
        let context = places.context(of: index)
        do throws(ImportError) {
            try places.forEachSelected(
                input: index, path: name, selection: selection, chunkSize: options.chunkSize
            ) { ordinal, place, piece, first, last throws(ImportError) in
                try parseSide.feedPlaced(ordinal, place, piece, first: first, last: last, context: context)
            }
        } catch {
            if case .input(let failure) = error { throw damaged(failure) }
            throw error
        }
        parseSide.endPlaced(units: plan.unitCounts[index], size: size)
        try endInput()
        return true
    }

    /// Saves the units the run read, in digest order, ``unitsPerSave`` a
    /// transaction; the last marks the set valid. A run under another
    /// fingerprint that voids per key keeps the store's set instead, with the
    /// keys it wrote voided, unless it read or wrote too much for that
    /// (``maxVoidedKeys``): then its units make the set anew.
    func saveUnits() throws(ImportError) {
        guard let recorder = parseSide.recorder else { return }
        if let voiding {
            do throws(StoreError) {
                if recorder.spill.count * 2 < voiding.units,
                    try store.keepDigests(voidingWritten: min(Self.maxVoidedKeys, voiding.units / 2))
                {
                    return
                }
                try store.startDigests(
                    fingerprint: DigestPolicy.fingerprint(compiled, options), secret: voiding.secret, fresh: true)
                fullPass = Self.madeAnew
            } catch {
                throw .store(error)
            }
        }
        // Units that produce a key whose occurrences disagree are pinned; past
        // the log's limit the set stays invalid and the next run parses all.
        let log = storeSide.sorter?.mixedKeys
        let mixed = (log?.identities ?? []).union(skipPlan?.mixedKeys ?? [])
        // An input the scanner could not cut has no units: a set without them
        // must not be trusted either.
        let trusted = log?.overflowed != true && recorder.refusal == nil
        // The run's units and the removed ones, both in digest order, merged
        // into saves of at most `unitsPerSave` changes (a removal before a
        // save of the same digest, as the store applies them).
        let units: SortedUnits
        let removals: SortedDigests?
        var unit: StoredUnit?
        var removal: UnitDigest?
        do {
            units = try recorder.spill.sorted()
            removals = try skipPlan?.removed.sorted()
            unit = try units.next()
            removal = try removals?.nextEntry()?.digest
        } catch {
            throw .spill(error)
        }
        var batch: [StoredUnit] = []
        var removing: [UnitDigest] = []
        while true {
            do throws(SpillError) {
                if let digest = removal, unit.map({ digest <= $0.digest }) ?? true {
                    removing.append(digest)
                    removal = try removals?.nextEntry()?.digest
                } else if var saved = unit {
                    if !mixed.isEmpty {
                        _ = UnitKeys.forEach(saved.keys, digest: saved.digest) { entry in
                            if mixed.contains(UnitKeys.identity(entry)) { saved.pinned = true }
                        }
                    }
                    batch.append(saved)
                    unit = try units.next()
                }
            } catch {
                throw .spill(error)
            }
            let done = unit == nil && removal == nil
            if !done && batch.count + removing.count < Self.unitsPerSave { continue }
            do { try store.saveUnits(batch, removing: removing, last: done && trusted) } catch {
                throw .store(error)
            }
            if done { return }
            batch.removeAll(keepingCapacity: true)
            removing.removeAll(keepingCapacity: true)
        }
    }

    /// After the sweeps of a run that kept digests and left its set valid,
    /// records the entities the set covers (``DigestSet/covered``): of those
    /// it can cover, the ones the run swept whole (no `delete-scope-parent`),
    /// those whose tables the run made, and those covered at its start that
    /// no unit gone from its inputs produced a key of and no other writer
    /// wrote a key of (``SkipPlan/stillCovered``).
    func markCovered() throws(ImportError) {
        guard !options.dryRun, parseSide.recorder != nil else { return }
        let carried = skipPlan?.stillCovered ?? []
        let coverable = DigestPolicy.coverable(compiled)
        let covered = compiled.mappers.indices.filter { coverable[$0] }.map { compiled.mappers[$0].schema.name }
            .filter { sweptWhole.contains($0) || newTables.contains($0) || carried.contains($0) }
        do throws(StoreError) {
            guard !covered.isEmpty, try store.digestSet()?.valid == true else { return }
            try store.markCovered(covered)
        } catch {
            throw .store(error)
        }
    }

    /// The warning of a run that voided the digests the next run would have
    /// trusted: it parses every record again.
    var digestWarning: String? {
        if let refusal = parseSide.recorder?.refusal {
            return "record digests not kept (\(refusal)): the next run parses every record again"
        }
        guard let digestRefusal, !options.noSkip else { return nil }
        return "record digests voided (\(digestRefusal)): the next run parses every record again"
    }

    /// A new digest secret from the system's random source.
    private static func newSecret() -> [UInt8] {
        var secret = [UInt8](repeating: 0, count: UnitHasher.secretBytes)
        var generator = SystemRandomNumberGenerator()
        for index in secret.indices { secret[index] = UInt8.random(in: 0...255, using: &generator) }
        return secret
    }
}
