import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The unit being read in a run that keeps record digests: its keyed digest
/// so far (``UnitHasher``) and the keys its records produced, each with the
/// digest of its contribution (``ContributionHasher``). One place hashes a
/// unit and gathers its keys, whichever thread parses it: the parse side's
/// ``UnitRecorder`` and each ``ParseWorker`` hold one.
///
/// Cost: SHA-256 of the unit's context and bytes; per record, its keys and
/// one SipHash of each row it produced. No allocation once `keys` and the
/// scratch buffer have grown.
struct PendingUnit {
    private var hasher: UnitHasher
    private let contributions: ContributionHasher
    /// The keys of the unit's records so far (``UnitKeys``' encoding).
    private(set) var keys: [UInt8] = []
    private var scratch: [UInt8] = []

    /// A unit hashed under `secret`.
    init(secret: [UInt8]) {
        hasher = UnitHasher(secret: secret)
        contributions = ContributionHasher(secret: secret)
    }

    /// Starts the next unit, in `context` (its `open`, then its first bytes
    /// an earlier chunk carried, are hashed first; nil: none).
    mutating func begin(_ context: UnitContext?) {
        hasher.begin()
        if let context {
            context.open.withUnsafeBytes { hasher.add($0) }
            context.carried.withUnsafeBytes { hasher.add($0) }
        }
        keys.removeAll(keepingCapacity: true)
    }

    /// Hashes the unit's next bytes.
    mutating func add(_ bytes: UnsafeRawBufferPointer) { hasher.add(bytes) }

    /// After each record of the unit: the keys it produced in `batcher`
    /// since its ``Batcher/markRecord()`` join the unit's.
    mutating func recorded(by batcher: Batcher) {
        batcher.appendRecordKeys(to: &keys, hasher: contributions, scratch: &scratch)
    }

    /// Ends the unit: its digest (its keys stay in ``keys`` until the next
    /// ``begin(_:)``).
    mutating func end() -> UnitDigest { hasher.end() }
}

/// The units a ``ParseWorker`` read in one item, in input order, for the
/// forwarder to add to the run's ``UnitSpill``: their digests and their keys
/// end to end in one buffer (three allocations an item, none a unit).
struct UnitBatch: Sendable {
    private var digests: [UnitDigest] = []
    private var keyEnds: [Int] = []
    private var keys: [UInt8] = []

    /// Whether it holds no unit.
    var isEmpty: Bool { digests.isEmpty }

    /// Appends the unit `pending` just ended with `digest`.
    mutating func append(_ digest: UnitDigest, of pending: PendingUnit) {
        digests.append(digest)
        keys += pending.keys
        keyEnds.append(keys.count)
    }

    /// Adds each unit to `spill`, in order.
    func add(to spill: UnitSpill) throws(SpillError) {
        var start = 0
        for (digest, end) in zip(digests, keyEnds) {
            try spill.add(digest: digest, keys: keys[start..<end])
            start = end
        }
    }
}
