/// The end of a run: delete-missing, dangling references, the report and
/// the ledger; or the failure, cancellation or drain that ends it early.
extension ImportPipeline {
    /// Waits for the store to commit everything queued, runs delete-missing
    /// (every input was read completely and without error), records the run
    /// as completed and reports.
    func finish() throws(ImportError) -> ImportReport {
        parseSide.workers?.stop()
        exchange.applySorted.set()
        exchange.groups.close()
        storeWorker?.join()
        storeWorker = nil
        if exchange.failure.value != nil {
            let error = exchange.storeFailure
            record(failure: error)
            throw error
        }
        if exchange.cancelled.isSet {
            record(failure: .cancelled)
            throw .cancelled
        }
        var warnings = store.migrations + (digestWarning.map { [$0] } ?? [])
        do throws(ImportError) {
            try saveUnits()
            try sweepMissing(&warnings)
            try markCovered()
        } catch {
            record(failure: error)
            throw error
        }
        if exchange.cancelled.isSet {
            record(failure: .cancelled)
            throw .cancelled
        }
        warnings += repeatedKeyWarnings()
        for (entity, count) in parseSide.skippedRows.enumerated() { storeSide.counts[entity].skipped += count }
        var report = makeReport()
        let dangling: [DanglingCount]
        storeSide.reportProgress(.checking)
        do throws(StoreError) {
            let counted = try storeSide.earlyCounts?.results() ?? [:]
            storeSide.earlyCounts = nil
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
                let message =
                    "\(name): \(count) links to records that are not in the store (the relationship says missing: error)"
                if options.dryRun {
                    wouldFail = wouldFail ?? message
                    continue
                }
                let error = ImportError.danglingReferences(message + "; the data is committed")
                record(failure: error)
                throw error
            }
        }
        report.warnings = resumedCompletedRunWarning + parseSide.inputWarnings + warnings
        report.dryRun = options.dryRun
        report.wouldFail = wouldFail
        do {
            runRecorded = true
            if !options.dryRun {
                try store.finishRun(
                    runID, status: .completed, records: report.records, counts: report.json, error: nil)
            }
        } catch {
            throw .store(error)
        }
        storeSide.reportProgress(.done)
        return report
    }

    func makeReport() -> ImportReport {
        let names = compiled.mappers.map(\.schema.name)
        let counts = storeSide.counts
        var report = ImportReport(
            records: parseSide.records, bytes: parseSide.rawBytes,
            seconds: ImportPipeline.now() - startTime,
            entities: zip(names, counts).map { ImportReport.Entity(name: $0.0, counts: $0.1) })
        report.unchangedRecords = skipPlan?.skipped ?? 0
        report.fullPass = fullPass
        let side = store.sideWrites
        report.tables = zip(names, counts).map { name, counts in
            TableReport(
                name: name, kind: .entity, inserted: counts.inserted + (side.stubs[name] ?? 0), updated: counts.updated,
                unchanged: counts.unchanged, deleted: counts.deleted + (side.childrenDeleted[name] ?? 0),
                stubs: side.stubs[name] ?? 0)
        }
        report.tables += compiled.links.map { link in
            TableReport(
                name: link.name, kind: .link, inserted: side.linksAdded[link.name] ?? 0,
                deleted: side.linksRemoved[link.name] ?? 0)
        }
        return report
    }

    /// Entities whose records repeated keys, and what became of them as the
    /// entity's write mode and deletions decide (``RowArena/onePerKey``):
    /// combined, or the last one whole. Entities also found nested in other
    /// records are left out: a shared object recurring is what nesting means.
    func repeatedKeyWarnings() -> [String] {
        let (recordRows, nestedRows, counts) = (parseSide.recordRows, parseSide.nestedRows, storeSide.counts)
        return compiled.mappers.enumerated().compactMap { entity, mapper in
            guard !mapper.schema.keyColumns.isEmpty, nestedRows[entity] == 0 else { return nil }
            let written =
                counts[entity].inserted + counts[entity].updated + counts[entity].unchanged + counts[entity].skipped
            let repeated = recordRows[entity] - written
            guard repeated > 0 else { return nil }
            let outcome: String
            switch (mapper.schema.mode, compiled.deletes(entity)) {
            case (.replace, false): outcome = "the last record of each key was written whole (replace)"
            case (.replace, true): outcome = "the last action on each key won (a record replaces, a deletion deletes)"
            case (_, false): outcome = "each was combined with it (present fields win, the last occurrence last)"
            case (_, true):
                outcome =
                    "each was combined with it (present fields win, the last occurrence last), and a deletion dropped what came before it"
            }
            return
                "\(mapper.schema.name): \(repeated) records repeated a key an earlier record of this run had; \(outcome)"
        }
    }

    /// Records a failed (or cancelled) run in the ledger (not a dry run);
    /// a failure to write the ledger is not allowed to hide the original
    /// error.
    func record(failure: ImportError) {
        guard !runRecorded && !options.dryRun else { return }
        runRecorded = true
        let status: RunStatus
        if case .cancelled = failure { status = .cancelled } else { status = .failed }
        _ = try? store.finishRun(
            runID, status: status, records: makeReport().records, counts: makeReport().json, error: "\(failure)")
    }

    /// Stops: pending groups are dropped, the batch being applied rolls back.
    func cancel() {
        exchange.cancelled.set()
        storeSide.interrupt()
    }

    /// After a failure: let the store commit what was parsed before it, then
    /// stop.
    func drain() {
        parseSide.workers?.stop()
        exchange.applySorted.set()
        exchange.groups.close()
        storeWorker?.join()
        storeWorker = nil
    }
}
