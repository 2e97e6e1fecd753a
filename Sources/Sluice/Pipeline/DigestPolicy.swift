@_spi(Machinery) import SluiceRecords

/// Whether a run keeps record digests (docs/record-digests.md), decided once
/// when it starts: a run keeps them only where running it again would write
/// nothing, and when its inputs can be cut into units.
enum DigestPolicy {
    /// The version of what a unit's digest and keys mean: a sluice whose
    /// mapping of records to rows changes raises it, so that digests an
    /// older one kept are not trusted.
    static let version = 4

    /// Why a run of `compiled` with `options` over inputs of `formats`
    /// (`nil` for a push) keeps no digests, or nil when it
    /// keeps them. The reasons are the run's warnings.
    static func refusal(_ compiled: CompiledMapping, _ options: ImportOptions, formats: [InputFormat?]) -> String? {
        if options.noSkip { return "--no-skip" }
        if options.resume { return "a resumed run" }
        if options.order == .input { return "--order input" }
        if formats.contains(where: { $0 == nil }) { return "pushed input is not cut into units" }
        if compiled.documentKind == .json {
            let multiple = formats.contains(.jsonl) || compiled.routes.contains { $0.path.components.isEmpty }
            if multiple && compiled.routes.contains(where: { !$0.path.components.isEmpty }) {
                return "records nested inside the values of JSON Lines"
            }
        }
        // A skipped unit's keys count as seen, but a deletion's key must not.
        let tracked = SeenKeys.tracked(compiled.mappers.map(\.schema))
        for (entity, mapper) in compiled.mappers.enumerated() {
            let name = mapper.schema.name
            if mapper.runsHooks { return "\(name) runs hooks" }
            if mapper.schema.mode == .updateOnly { return "\(name) is update-only" }
            if mapper.schema.keyColumns.isEmpty && compiled.derivedKeys[entity] == nil {
                return "\(name) has no key: each run creates its rows"
            }
            if tracked[entity] && compiled.deletes(entity) {
                return "\(name) deletes records in a run that sweeps it with delete-missing"
            }
        }
        for relations in compiled.relations where relations.contains(where: { $0.keyless == .create }) {
            return "a keyless relationship creates a row each run"
        }
        return nil
    }

    /// The tables a reference or link of `compiled` stubs missing targets
    /// into. A stub is made once, when its target is missing: once a sweep
    /// deletes rows of such a table, running a unit that names one of them
    /// again would stub it again, so the units are not trusted until a run
    /// parses them all (``ImportPipeline/sweepMissing(_:)``).
    static func stubTargets(_ compiled: CompiledMapping) -> Set<String> {
        let references = compiled.mappers.flatMap { $0.schema.references.filter { $0.missing == .stub } }
        return Set(references.map(\.targetTable) + compiled.links.filter { $0.missing == .stub }.map(\.targetTable))
    }

    /// Per entity of `compiled`: whether a digest set can cover it
    /// (``DigestSet/covered``: every row of its table produced by a unit of
    /// the set): keyed, and not a table that missing references stub into (a
    /// stub is a row no unit produced).
    static func coverable(_ compiled: CompiledMapping) -> [Bool] {
        let stubbed = stubTargets(compiled)
        return compiled.mappers.map { !$0.schema.keyColumns.isEmpty && !stubbed.contains($0.schema.name) }
    }

    /// Per entity of `compiled`: whether a run that skips, under a set that
    /// covers the entities of `covered`, sweeps it in proportion to the
    /// change (docs/record-digests.md, "Delete-missing"): deletes only keys of
    /// the units gone and keys other writers voided, and records no skipped
    /// unit's keys as seen. A swept entity the set covers, unless a delete
    /// scope reads every seen key of it or of its parent
    /// (`delete-scope-parent`, its own or another's that names it).
    static func sweepsInProportion(_ compiled: CompiledMapping, covered: Set<String>) -> [Bool] {
        let schemas = compiled.mappers.map(\.schema)
        let parents = Set(schemas.filter(\.deleteMissing).compactMap { $0.deleteScopeParent?.targetTable })
        return zip(schemas, coverable(compiled)).map { schema, coverable in
            coverable && schema.deleteMissing && covered.contains(schema.name) && schema.deleteScopeParent == nil
                && !parents.contains(schema.name)
        }
    }

    /// What decides the rows a unit produces, or whether it is accepted, as
    /// the digest set records it: the version of their meaning, the mapping
    /// compiled for the run, the write mode, the format, the record limits.
    /// Delete-missing and the options that change only the cost are left out.
    static func fingerprint(_ compiled: CompiledMapping, _ options: ImportOptions) -> String {
        let limits = options.limits
        return "\(version) \(compiled.fingerprint) \(options.store.mode.rawValue) \(options.format?.rawValue ?? "-") "
            + "\(limits.maxDepth) \(limits.maxRecordBytes) \(limits.maxFieldBytes) \(limits.maxFields)"
    }
}
