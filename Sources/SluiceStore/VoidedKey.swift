/// A key that a run under another fingerprint than the store's digest set
/// wrote (docs/record-digests.md, "Other writers"): the units of the set
/// that produced it are no longer trusted, and the next run that skips
/// parses them again.
package struct VoidedKey: Sendable, Equatable {
    /// The entity's table, or the link table (whose key is the source's).
    package var table: String
    /// The key's cells in ``UnitKeys``' encoding, as a unit's entry holds it.
    package var key: [UInt8]

    package init(table: String, key: [UInt8]) {
        self.table = table
        self.key = key
    }
}

/// A table whose written keys a run logs (``ImportStore/startVoidingWrites(_:)``):
/// its name and the columns of its key (a link table: its source columns).
package struct WrittenTable: Sendable, Equatable {
    package var name: String
    package var keyColumns: [String]

    package init(name: String, keyColumns: [String]) {
        self.name = name
        self.keyColumns = keyColumns
    }
}
