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
        let parents = Set(schemas.filter(\.deleteMissing).compactMap { $0.deleteScopeParent?.targetTable })
        for schema in schemas
        where !schema.keyColumns.isEmpty && (schema.deleteMissing || parents.contains(schema.name)) {
            try trackSeenKeys(of: schema, resuming: resuming)
        }
    }
}
