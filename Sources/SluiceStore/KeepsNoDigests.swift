import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// A store that keeps no record digests (docs/record-digests.md): the null
/// store, which keeps nothing. A run into it parses every record and says
/// why.
package protocol KeepsNoDigests: ImportStore {}

extension KeepsNoDigests {
    package var keepsDigests: Bool { false }
    package func digestSet() throws(StoreError) -> DigestSet? { nil }
    package func startDigests(fingerprint: String, secret: [UInt8], fresh: Bool) throws(StoreError) {}
    package func saveUnits(_ saved: [StoredUnit], removing removed: [UnitDigest], last: Bool) throws(StoreError) {}
    package func voidDigests() throws(StoreError) {}
    package func markCovered(_ entities: [String]) throws(StoreError) {}
    package func markRemoved(_ candidates: [(schema: TableSchema, keys: RowArena)]) throws(StoreError) {}
    package func forEachUnit(_ body: (StoredUnit) throws(StoreError) -> Void) throws(StoreError) {}
    package func startVoidingWrites(_ tables: [WrittenTable]) throws(StoreError) -> Bool { false }
    package func keepDigests(voidingWritten limit: Int) throws(StoreError) -> Bool { false }
    package func voidedKeys(limit: Int) throws(StoreError) -> [VoidedKey]? { [] }
}
