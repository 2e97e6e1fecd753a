import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The keys a ``SkipPlan``'s probe finds in the units it parses, each with
/// the digest of the first contribution to it and whether another differed;
/// then, for the closure over disagreement, which kept units produce one of
/// them with another contribution.
///
/// The first ``maxHeld`` keys are held in a dictionary (about 180 bytes a
/// key: its bytes, an array of its own, and the entry). A key first met
/// past them is spilled: a ``DigestSorter`` entry under a keyed digest of its
/// identity (its contribution and identity with it: about 35 bytes on disk
/// for an integer key), and its bits in a ``KeyFilter`` of ``filterKeys``. The
/// closure's scan of the kept units looks a key up among the held ones
/// (in a ``ClosureKeys`` made of ``held``) and hands one ``spilledFilter`` may hold to ``meet(_:contribution:payloads:)``,
/// a second sorter's entry with the kept unit's payload; ``closeSpilled(_:)``
/// then merges the two sorters by digest. So the probe holds at most
/// ``maxHeld`` keys, the filter (2 MiB) and two sorters' budgets however
/// large the change, and what it spills costs in proportion to the keys
/// spilled and the kept keys the filter lets through.
///
/// The held keys are the first met because a key many units share (an
/// actor, a tag) turns up early and is met by most kept units: held, each
/// meeting is a lookup; spilled, it would be an entry sorted on disk.
final class ProbedKeys {
    /// The keys held in memory; the ones first met past them are spilled.
    /// 100,000 keys hold about 18 MB, what the probe held at most when it
    /// gave up past them (a next day's dump of 2,000,000 events with 2%
    /// changed probes about 60,000). Held rather than spilled, a small
    /// change's keys cost less: 0.93 × the CPU at 200,000 events with 1%
    /// changed, 58.8 MiB of peak against 63.1 (docs/nightly-sync.md, "A
    /// large change beside kept records").
    static let maxHeld = 100_000
    /// The spilled keys the filter is sized for (``KeyFilter/bitsPerKey``
    /// each: 2 MiB); past them more kept keys are let through to the merge,
    /// none missed.
    static let filterKeys = 1 << 21
    /// The budget of each of the two sorters of spilled keys.
    static let sorterBytes = 2 << 20

    /// One key's contributions among the units probed: the first, and
    /// whether another differed.
    struct Contribution {
        var first: UInt64
        var mixed: Bool
    }

    /// A key and its table, as a dictionary key: its bytes hashed in one
    /// call (an array of bytes hashes byte by byte).
    struct HeldKey: Hashable {
        var table: Int
        var key: [UInt8]

        func hash(into hasher: inout Hasher) {
            hasher.combine(table)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The keys held.
    var held: [HeldKey: Contribution] = [:]
    /// The keys spilled: the digest of the identity, the contribution as the
    /// payload, the identity as the bytes.
    private let spilled: DigestSorter
    /// The kept units' keys that may be spilled ones: the digest of the
    /// identity, the kept unit's payload, its contribution as the bytes.
    private let met: DigestSorter
    /// The spilled keys' bits, made at the first spilled key.
    private var filter: KeyFilter?
    private var hasher: UnitHasher

    /// Keys spilled to `directory`, their digests under `secret`.
    init(directory: String, secret: [UInt8]) {
        spilled = DigestSorter(directory: directory, memoryBytes: Self.sorterBytes)
        met = DigestSorter(directory: directory, memoryBytes: Self.sorterBytes)
        hasher = UnitHasher(secret: secret)
    }

    /// Whether the probe found no key.
    var isEmpty: Bool { held.isEmpty && filter == nil }

    /// Notes one key a probed unit produced, with its contribution.
    func add(_ entry: UnitKeys.Entry) throws(SpillError) {
        let key = HeldKey(table: entry.table, key: entry.key)
        if let seen = held[key] {
            if seen.first != entry.contribution { held[key]?.mixed = true }
        } else if held.count < Self.maxHeld {
            held[key] = Contribution(first: entry.contribution, mixed: false)
        } else {
            if filter == nil { filter = KeyFilter(count: Self.filterKeys) }
            entry.key.withUnsafeBytes { filter?.insert(table: entry.table, key: $0) }
            let identity = UnitKeys.identity(entry)
            let digest = identity.withUnsafeBytes { hasher.digest($0) }
            try spilled.add(DigestEntry(digest: digest, payload: entry.contribution), bytes: identity)
        }
    }

    /// The spilled keys' filter, nil when none was spilled: a key it does
    /// not hold is not a spilled key. No allocation to ask.
    var spilledFilter: KeyFilter? { filter }

    /// Notes that the kept units of `payloads` (one unit's digest: its
    /// entries) produce the key of `identity` with `contribution`, for the
    /// merge with the spilled keys. For a key ``spilledFilter`` lets
    /// through.
    func meet(_ identity: [UInt8], contribution: UInt64, payloads: [UInt64]) throws(SpillError) {
        let digest = identity.withUnsafeBytes { hasher.digest($0) }
        let bytes = withUnsafeBytes(of: contribution.littleEndian) { Array($0) }
        for payload in payloads { try met.add(DigestEntry(digest: digest, payload: payload), bytes: bytes) }
    }

    /// Merges the spilled keys with the kept units that met them, by digest:
    /// a key whose probed contributions differ, or that a kept unit produces
    /// with another contribution, is mixed, and each kept unit that meets it
    /// from then on is handed to `reselect` (as the closure does with a held
    /// key: the kept units of one key agree, or the last run had found it
    /// mixed and pinned them). Returns the identities of the mixed keys.
    /// Ends both sorters. Time: O(n log n) in the entries, read once.
    func closeSpilled(_ reselect: (UInt64) -> Void) throws(SpillError) -> [[UInt8]] {
        guard filter != nil else { return [] }
        let keys = try spilled.sorted()
        let meetings = try met.sorted()
        var mixed: [[UInt8]] = []
        var key = try keys.next()
        var meeting = try meetings.next()
        while let (first, identity) = key.map({ ($0.entry, $0.bytes) }) {
            var differs = false
            key = try keys.next()
            while let same = key?.entry, same.digest == first.digest {
                if same.payload != first.payload { differs = true }
                key = try keys.next()
            }
            while let entry = meeting?.entry, entry.digest < first.digest { meeting = try meetings.next() }
            while let (entry, bytes) = meeting.map({ ($0.entry, $0.bytes) }), entry.digest == first.digest {
                let contribution = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
                if differs || contribution != first.payload {
                    differs = true
                    reselect(entry.payload)
                }
                meeting = try meetings.next()
            }
            if differs { mixed.append(identity) }
        }
        return mixed
    }
}
