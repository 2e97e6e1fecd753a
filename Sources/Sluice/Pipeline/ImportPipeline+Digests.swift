import SluiceBatching
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
    /// Units saved per transaction at the end of a run.
    static let unitsPerSave = 10_000

    /// Decides whether the run keeps record digests in `store`: if so, starts
    /// the store's set (invalid until the units are saved) and returns the
    /// recorder the parse side feeds, with the plan of a run that skips the
    /// units the store kept when its set is valid and made under the same
    /// fingerprint; if not, voids the set when the run writes, and returns
    /// why not.
    static func recordDigests(
        _ store: any ImportStore, _ compiled: CompiledMapping, _ options: ImportOptions, formats: [InputFormat?],
        directory: String
    ) throws(ImportError) -> (recorder: UnitRecorder?, plan: SkipPlan?, refusal: String?) {
        var refusal = DigestPolicy.refusal(compiled, options, formats: formats)
        if refusal == nil && !store.keepsDigests { refusal = "the store keeps no record digests" }
        do throws(StoreError) {
            guard refusal == nil else {
                if !options.dryRun { try store.voidDigests() }
                return (nil, nil, refusal)
            }
            let fingerprint = DigestPolicy.fingerprint(compiled, options)
            let kept = try store.digestSet()
            let secret = kept?.secret ?? newSecret()
            // Delete-missing needs the keys of skipped units counted as seen: not yet.
            let skips =
                kept?.valid == true && kept?.fingerprint == fingerprint
                && !compiled.mappers.contains { $0.schema.deleteMissing }
            try store.startDigests(fingerprint: fingerprint, secret: secret, fresh: !skips)
            let plan =
                skips
                ? SkipPlan(
                    compiled: compiled, options: options, secret: secret, directory: directory, inputs: formats.count)
                : nil
            return (UnitRecorder(secret: secret, directory: directory), plan, nil)
        } catch {
            throw .store(error)
        }
    }

    /// Before the parse of a run that skips: plans which units it parses
    /// (``SkipPlan``) and hands the choice to the parse side.
    func planSkipping(_ inputs: [(name: String, format: InputFormat)]) throws(ImportError) {
        guard let plan = skipPlan, let recorder = parseSide.recorder else { return }
        try plan.plan(inputs, store: store)
        recorder.selection = plan.selection
    }

    /// Saves the units the run read, in digest order, ``unitsPerSave`` a
    /// transaction; the last marks the set valid.
    func saveUnits() throws(ImportError) {
        guard let recorder = parseSide.recorder else { return }
        var removed = skipPlan?.removed ?? []
        // Units that produce a key whose occurrences disagree are pinned; past
        // the log's limit the set stays invalid and the next run parses all.
        let log = storeSide.sorter?.mixedKeys
        let mixed = (log?.identities ?? []).union(skipPlan?.mixedKeys ?? [])
        let trusted = log?.overflowed != true
        let units: SortedUnits
        do { units = try recorder.spill.sorted() } catch { throw .spill(error) }
        var batch: [StoredUnit] = []
        while true {
            let unit: StoredUnit?
            do { unit = try units.next() } catch { throw .spill(error) }
            if var unit {
                if !mixed.isEmpty {
                    _ = UnitKeys.forEach(unit.keys) { entry in
                        if mixed.contains(UnitKeys.identity(entry)) { unit.pinned = true }
                    }
                }
                batch.append(unit)
                if batch.count < Self.unitsPerSave { continue }
            }
            let removing = removed
            removed = []
            do { try store.saveUnits(batch, removing: removing, last: unit == nil && trusted) } catch { throw .store(error) }
            batch.removeAll(keepingCapacity: true)
            if unit == nil { return }
        }
    }

    /// The warning of a run into a store that keeps digests, when this run
    /// keeps none: the next run parses every record.
    var digestWarning: String? {
        guard let digestRefusal, store.keepsDigests, !options.dryRun, !options.noSkip else { return nil }
        return "record digests not kept (\(digestRefusal)): the next run parses every record again"
    }

    /// A new digest secret from the system's random source.
    private static func newSecret() -> [UInt8] {
        var secret = [UInt8](repeating: 0, count: UnitHasher.secretBytes)
        var generator = SystemRandomNumberGenerator()
        for index in secret.indices { secret[index] = UInt8.random(in: 0...255, using: &generator) }
        return secret
    }
}
