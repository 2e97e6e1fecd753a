import SluiceRecords

/// Which tables record the keys a run sees, the same in every store that
/// keeps rows.
extension RowStore {
    /// Starts recording the keys this run writes to the tables of the
    /// entities it sweeps (``TableSchema/deleteMissing``) and of the parents
    /// their delete scope names (``TableSchema/deleteScopeParent``: children
    /// are swept only under a parent the run saw). A run that does not
    /// resume forgets the keys recorded before; a resumed run keeps them.
    package func startTrackingSeenKeys(_ schemas: [TableSchema], resuming: Bool) throws(StoreError) {
        for (schema, tracked) in zip(schemas, SeenKeys.tracked(schemas)) where tracked {
            try trackSeenKeys(of: schema, resuming: resuming)
        }
    }
}

/// Which entities' keys a run records as seen: the one place it is decided.
package enum SeenKeys {
    /// Per schema of `schemas`: whether the run records its keys (a keyed
    /// entity it sweeps, or the parent a swept entity's delete scope names).
    package static func tracked(_ schemas: [TableSchema]) -> [Bool] {
        let parents = Set(schemas.filter(\.deleteMissing).compactMap { $0.deleteScopeParent?.targetTable })
        return schemas.map { !$0.keyColumns.isEmpty && ($0.deleteMissing || parents.contains($0.name)) }
    }
}
