/// Delete-missing at the end of a complete run: which entities are swept,
/// the ``ImportOptions/maxDelete`` brake counted before the first deletion,
/// then the sweeps.
extension ImportPipeline {
    /// Sweeps every entity with delete-missing (``TableSchema/deleteMissing``,
    /// settled when the mapping was compiled) whose keys the run saw (or
    /// every one, with ``ImportOptions/allowEmptyDelete``), adding each one's
    /// deletions to its counts and a warning per entity left alone; then
    /// forgets the seen keys and marks the run swept. A resume of a run that
    /// had swept sweeps nothing (its seen keys are gone) and says so. With a
    /// ``ImportOptions/maxDelete`` that an entity's would-be deletions
    /// exceed, it deletes nothing, keeps the seen keys (a resume sweeps with
    /// them) and throws ``ImportError/deletionLimit(_:)``; a dry run sweeps
    /// all the same, to report what `--delete-missing` would delete, and
    /// notes the refusal in ``wouldFail``. In a run that keeps record
    /// digests, the set is marked invalid before the first sweep of a table
    /// that references stub into (``DigestPolicy/stubTargets(_:)``), and
    /// valid again after the sweeps unless one of those deleted a row: then
    /// the next run parses every record, and a warning says so.
    func sweepMissing(_ warnings: inout [String]) throws(ImportError) {
        var refusal: String?
        do throws(StoreError) {
            let deleting = compiled.mappers.indices.filter { compiled.mappers[$0].schema.deleteMissing }
            if let resumed = resumedRun, resumed.swept, resumed.status != .completed, !deleting.isEmpty {
                // Its seen keys went with its last sweep: sweeping now would find none.
                warnings.append(
                    "delete-missing: run \(resumed.id), which this run resumes, had already deleted the rows of "
                        + "\(deleting.map { compiled.mappers[$0].schema.name }.joined(separator: ", ")) that the dump no longer has; this run deleted none"
                )
            }
            var swept: [Int] = []
            for entity in deleting where resumedRun?.swept != true {
                let schema = compiled.mappers[entity].schema
                // Keys the store received, in this run or in the interrupted
                // run it resumes (filtered-out records do not count).
                if try !store.hasSeenKeys(schema) && !options.allowEmptyDelete {
                    warnings.append(
                        "delete-missing left \(schema.name) alone: the run saw none of its records (allow it with --allow-empty-delete)"
                    )
                    continue
                }
                swept.append(entity)
            }
            if let limit = options.maxDelete { refusal = try deletionsBeyond(limit, swept) }
            if refusal == nil || options.dryRun {
                let stubbed = DigestPolicy.stubTargets(compiled)
                var trusted: Bool?
                var stubsDeleted: [String] = []
                for entity in swept {
                    let schema = compiled.mappers[entity].schema
                    // Untrusted before a deletion that could make a unit's re-run stub again.
                    if stubbed.contains(schema.name) && parseSide.recorder != nil && trusted == nil {
                        trusted = try store.digestSet()?.valid == true
                        if trusted == true { try store.voidDigests() }
                    }
                    storeSide.reportProgress(.deleting, table: schema.name)
                    let deleted = try store.deleteMissing(schema, links: compiled.links)
                    storeSide.counts[entity].deleted += deleted
                    if schema.deleteScopeParent == nil { sweptWhole.insert(schema.name) }
                    if deleted > 0 && stubbed.contains(schema.name) { stubsDeleted.append(schema.name) }
                }
                if trusted == true {
                    if stubsDeleted.isEmpty {
                        try store.saveUnits([], removing: [], last: true)
                    } else {
                        warnings.append(
                            "record digests voided (delete-missing deleted rows of \(stubsDeleted.joined(separator: ", ")), "
                                + "which missing references stub): the next run parses every record again")
                    }
                }
                // A dry run leaves the seen keys to its rollback: ending them
                // marks the run swept in a ledger that has no row for it.
                if !options.dryRun { try store.stopTrackingSeenKeys(run: runID) }
            }
        } catch {
            throw exchange.cancelled.isSet ? .cancelled : .store(error)
        }
        guard let refusal else { return }
        guard options.dryRun else {
            throw .deletionLimit(
                "delete-missing refused: \(refusal); nothing was deleted. The rows this run inserted and updated are committed "
                    + "and the keys it saw are kept: if the input is complete, run the same command with --resume and a larger "
                    + "--max-delete to delete them")
        }
        wouldFail = wouldFail ?? "delete-missing would be refused: \(refusal)"
    }

    /// Counts what the sweep of each of `entities` would delete; names
    /// every entity that would lose more than `limit` with its counts, or
    /// nil when all stay within it. One scan of each entity's table.
    private func deletionsBeyond(_ limit: DeleteLimit, _ entities: [Int]) throws(StoreError) -> String? {
        var beyond: [String] = []
        for entity in entities {
            let schema = compiled.mappers[entity].schema
            storeSide.reportProgress(.deleting, table: schema.name)
            let rows = try store.missingRows(schema)
            if !limit.allows(deleting: rows.missing, of: rows.stored) {
                beyond.append(
                    "\(schema.name) would lose \(rows.missing) of its \(rows.stored) stored rows (\(Self.percentage(rows.missing, of: rows.stored)))"
                )
            }
        }
        guard !beyond.isEmpty else { return nil }
        return "\(beyond.joined(separator: "; ")), more than --max-delete \(limit) allows"
    }

    /// `part` as a percentage of `whole`, to a tenth.
    static func percentage(_ part: Int, of whole: Int) -> String {
        let tenths = whole > 0 ? (part * 1000 + whole / 2) / whole : 0
        return "\(tenths / 10).\(tenths % 10)%"
    }
}
