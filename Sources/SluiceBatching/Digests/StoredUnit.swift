import SluiceRecords

/// One unit of the last digest run, as the store keeps it: its digest, the
/// keys it produced in every entity with their contributions' digests
/// (encoded by the pipeline; opaque here), and whether it is always parsed.
package struct StoredUnit: Sendable, Equatable {
    package var digest: UnitDigest
    package var keys: [UInt8]
    package var pinned: Bool

    package init(digest: UnitDigest, keys: [UInt8], pinned: Bool) {
        self.digest = digest
        self.keys = keys
        self.pinned = pinned
    }
}
