import SluiceBatching
import SluiceRecords

/// The changes to a SQLite digest set since its pages were last written
/// whole: `_sluice_unit_changes`, pages of the same entries as
/// `_sluice_unit_pages` (``UnitPage``), plus removals of digests the pages
/// hold. A next day's run changes a few percent of the units, but their
/// digests fall in every page: written into the pages, they rewrote the
/// whole set every night (116 MB at 2,000,000 events, into the WAL and
/// again into the file). Written here, a night writes the pages of its
/// changes; readers merge the two tables (``forEachUnit(_:)``), and once
/// the changes outgrow ``changesFoldShare`` of the set they are written
/// into the pages in one pass (``foldChangesIfLarge(_:)``).
extension SQLiteStore {
    /// The changes are written into the pages once they number more than
    /// the set's units divided by this: at a few percent of the set a night,
    /// a fold every few nights, whose cost (the whole set written once) is
    /// then shared among them, while the changes a night rewrites (their
    /// digests fall in every page of theirs too) stay under an eighth of
    /// the set.
    static let changesFoldShare = 8

    /// Applies `changes` (in digest order; of one digest's the last wins)
    /// to `_sluice_unit_changes`, and returns how the set's units and bytes
    /// changed. A removal of a digest the pages hold is kept as a removal;
    /// of one they do not, nothing is. One lookup in the pages a change
    /// (their page kept for the changes after it).
    func saveChanges(
        _ changes: [(digest: UnitDigest, unit: StoredUnit?)], _ action: String
    ) throws(StoreError) -> (units: Int, bytes: Int64) {
        let pages = try UnitPageStatements(connection, table: "_sluice_unit_changes", pageSize: pageSize, action)
        let stored = try UnitPageLookup(self, action)
        var sums = (units: 0, bytes: Int64(0))
        try rewritePages(of: pages, for: changes[...], action) { (kept, range) throws(StoreError) in
            var merged: [UnitPage.Piece] = []
            merged.reserveCapacity(kept.count + range.count)
            var next = 0
            var change = range.lowerBound
            while change < range.upperBound {
                let digest = changes[change].digest
                while next < kept.count && kept[next].digest < digest {
                    merged.append(.kept(kept[next]))
                    next += 1
                }
                while change + 1 < range.upperBound && changes[change + 1].digest == digest { change += 1 }
                // The digest's entry in the set before: the change kept for
                // it, else the pages'.
                let inPages = try stored.entryBytes(of: digest)
                var before = inPages
                if next < kept.count && kept[next].digest == digest {
                    before = kept[next].removal ? nil : kept[next].bytes.count
                    next += 1
                }
                let unit = changes[change].unit
                if let unit {
                    merged.append(.saved(unit))
                } else if inPages != nil {
                    merged.append(.removal(digest))
                }
                let after = unit.map(UnitPage.entryBytes)
                sums.units += (after == nil ? 0 : 1) - (before == nil ? 0 : 1)
                sums.bytes += Int64((after ?? 0) - (before ?? 0))
                change += 1
            }
            for span in kept[next...] { merged.append(.kept(span)) }
            return merged
        }
        return sums
    }

    /// Writes the changes into the pages and empties `_sluice_unit_changes`
    /// when they number more than the set's units over
    /// ``changesFoldShare``. Reads one page of changes at a time.
    func foldChangesIfLarge(_ action: String) throws(StoreError) {
        let counts = try SQLiteStatement(
            connection,
            "SELECT (SELECT coalesce(sum(count), 0) FROM _sluice_unit_changes), units FROM _sluice_digest_state",
            action)
        guard try counts.step(action) else { return }
        let (changed, units) = (Int(counts.int64(0)), Int(counts.int64(1)))
        guard changed > 0 && changed * Self.changesFoldShare > units else { return }
        let pages = try UnitPageStatements(connection, table: "_sluice_unit_pages", pageSize: pageSize, action)
        let rows = try SQLiteStatement(connection, "SELECT units FROM _sluice_unit_changes ORDER BY first", action)
        while try rows.step(action) {
            let changes = try rows.withBlob(0) { (raw) throws(StoreError) in
                guard let spans = UnitPage.spans(raw) else { throw malformedPage(action) }
                return spans.map { (digest: $0.digest, unit: UnitPage.unit($0, in: raw)) }
            }
            try apply(changes[...], to: pages, action)
        }
        try connection.execute("DELETE FROM _sluice_unit_changes", action)
    }
}

/// Reads `_sluice_unit_changes` in digest order beside a scan of the pages
/// (``SQLiteStore/forEachUnit(_:)``): one page of changes decoded at a time.
final class UnitChangeCursor {
    private let statement: SQLiteStatement?
    private let action: String
    private unowned let store: SQLiteStore
    private var entries: [(digest: UnitDigest, unit: StoredUnit?)] = []
    private var index = 0
    private var ended = false

    /// A cursor at the first change of `store`'s set (none when it has no
    /// changes table: a store an older sluice made).
    init(_ store: SQLiteStore, _ action: String) throws(StoreError) {
        self.store = store
        self.action = action
        statement =
            try store.tableExists("_sluice_unit_changes")
            ? SQLiteStatement(store.connection, "SELECT units FROM _sluice_unit_changes ORDER BY first", action) : nil
        ended = statement == nil
    }

    /// Hands each changed unit before `digest` (every one left when nil)
    /// to `body`, skipping removals; then returns the change of `digest`
    /// itself, taken (its unit, or nil for a removal), or nil when there is
    /// none.
    func take(
        upTo digest: UnitDigest?, _ body: (StoredUnit) throws(StoreError) -> Void
    ) throws(StoreError) -> StoredUnit?? {
        while let current = try current() {
            if let digest, current.digest >= digest {
                guard current.digest == digest else { return nil }
                index += 1
                return .some(current.unit)
            }
            index += 1
            if let unit = current.unit { try body(unit) }
        }
        return nil
    }

    private func current() throws(StoreError) -> (digest: UnitDigest, unit: StoredUnit?)? {
        while index == entries.count {
            guard !ended, let statement, try statement.step(action) else {
                ended = true
                return nil
            }
            let store = store
            let action = action
            entries = try statement.withBlob(0) { (raw) throws(StoreError) in
                guard let spans = UnitPage.spans(raw) else { throw store.malformedPage(action) }
                return spans.map { (digest: $0.digest, unit: UnitPage.unit($0, in: raw)) }
            }
            index = 0
        }
        return entries[index]
    }
}

/// Finds digests in `_sluice_unit_pages`, asked in digest order: the page
/// found is kept for the digests after it.
final class UnitPageLookup {
    private let pages: UnitPageStatements
    private let action: String
    private unowned let store: SQLiteStore
    private var bytes: [UInt8] = []
    private var spans: [UnitPage.Span] = []
    private var first: UnitDigest?
    private var next: UnitDigest?
    private var loaded = false

    init(_ store: SQLiteStore, _ action: String) throws(StoreError) {
        self.store = store
        self.action = action
        pages = try UnitPageStatements(store.connection, table: "_sluice_unit_pages", pageSize: store.pageSize, action)
    }

    /// The bytes of `digest`'s entry in the pages, nil when they do not
    /// hold it.
    func entryBytes(of digest: UnitDigest) throws(StoreError) -> Int? {
        let held = loaded && (first.map { $0 <= digest } ?? false) && (next.map { digest < $0 } ?? true)
        if !held {
            let found = try pages.holding(digest)
            bytes = found.bytes ?? []
            guard let decoded = bytes.withUnsafeBytes({ UnitPage.spans($0) }) else {
                throw store.malformedPage(action)
            }
            spans = decoded
            first = found.first?.withUnsafeBytes { UnitDigest(bytes: $0) }
            next = found.next
            loaded = true
        }
        var (low, high) = (0, spans.count)
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].digest < digest { low = middle + 1 } else { high = middle }
        }
        return low < spans.count && spans[low].digest == digest ? spans[low].bytes.count : nil
    }
}
