import CSluiceSQLite3
import SluiceBatching
import SluiceRecords

/// The record digests (docs/record-digests.md) in two tables of the store's
/// own: `_sluice_digest_state`, one row (the secret, the fingerprint,
/// whether the set is valid, and the set's units and bytes, kept up to date
/// by every save so that reading them costs one row, not a scan of the
/// pages), and `_sluice_unit_pages`, the units of the
/// last digest run packed in digest order, up to ``UnitPage/capacity`` a row
/// (``UnitPage``), each row keyed by its first digest (WITHOUT ROWID) so that
/// a run's join reads them in the order its own digests sort, and
/// `_sluice_unit_changes`, the changes saved since the pages were last
/// written (``SQLiteStore+UnitChanges``). Sets kept one
/// unit a row (`_sluice_units`, digest version 1) are dropped when a run
/// starts: their fingerprint is not trusted.
extension SQLiteStore {
    static let digestSchema = """
        DROP TABLE IF EXISTS _sluice_units;
        CREATE TABLE IF NOT EXISTS _sluice_digest_state (
          id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL, fingerprint TEXT NOT NULL,
          valid INTEGER NOT NULL, units INTEGER, bytes INTEGER);
        CREATE TABLE IF NOT EXISTS _sluice_unit_pages (
          first BLOB PRIMARY KEY, count INTEGER NOT NULL, units BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS _sluice_unit_changes (
          first BLOB PRIMARY KEY, count INTEGER NOT NULL, units BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS _sluice_voided_keys (tbl TEXT NOT NULL, k0);
        CREATE TABLE IF NOT EXISTS _sluice_digest_covered (entity TEXT PRIMARY KEY) WITHOUT ROWID
        """

    package var keepsDigests: Bool { true }

    /// Makes the digest tables, and gives a state row that keeps no sums
    /// (an older sluice made it, or last started digests in it: it replaced
    /// the row) its units and bytes, counted (a scan of the unit pages).
    func prepareDigestTables(_ action: String) throws(StoreError) {
        try connection.execute(Self.digestSchema, action)
        let columns = try connection.strings("PRAGMA table_info(_sluice_digest_state)", column: 1, action)
        let counted = try Self.countedSums(connection)
        let added =
            columns.contains("units")
            ? [] : ["units", "bytes"].map { "ALTER TABLE _sluice_digest_state ADD COLUMN \($0) INTEGER" }
        let fill =
            "UPDATE _sluice_digest_state SET units = \(counted.units), bytes = \(counted.bytes) "
            + "WHERE units IS NULL OR bytes IS NULL"
        try connection.execute((added + [fill]).joined(separator: "; "), action)
    }

    /// The SQL of the set's units and bytes: the sums its state row keeps,
    /// or, in a row that keeps none (``prepareDigestTables(_:)``), the sums
    /// counted over the unit pages (one scan).
    private static func sums(_ connection: SQLiteConnection, _ action: String) throws(StoreError) -> (
        units: String, bytes: String
    ) {
        let columns = try connection.strings("PRAGMA table_info(_sluice_digest_state)", column: 1, action)
        let counted = try countedSums(connection)
        guard columns.contains("units") else { return counted }
        return ("coalesce(units, \(counted.units))", "coalesce(bytes, \(counted.bytes))")
    }

    /// The SQL that counts the set's units and bytes over its pages.
    private static func countedSums(_ connection: SQLiteConnection) throws(StoreError) -> (
        units: String, bytes: String
    ) {
        guard try tableExists("_sluice_unit_pages", connection) else { return ("0", "0") }
        return (
            "(SELECT coalesce(sum(count), 0) FROM _sluice_unit_pages)",
            "(SELECT coalesce(sum(length(units)), 0) FROM _sluice_unit_pages)"
        )
    }

    /// The store's digest set, nil when it keeps none. A few rows read.
    package func digestSet() throws(StoreError) -> DigestSet? {
        let action = "reading the record digests"
        guard try tableExists("_sluice_digest_state") else { return nil }
        let units = try Self.sums(connection, action).units
        let state = try SQLiteStatement(
            connection, "SELECT secret, fingerprint, valid, \(units) FROM _sluice_digest_state WHERE id = 1", action)
        guard try state.step(action) else { return nil }
        let covered =
            try tableExists("_sluice_digest_covered")
            ? try connection.strings("SELECT entity FROM _sluice_digest_covered", column: 0, action) : []
        return DigestSet(
            secret: state.blob(0), fingerprint: state.text(1), valid: state.int64(2) != 0, units: Int(state.int64(3)),
            covered: Set(covered))
    }

    /// Starts a run that keeps digests under `fingerprint` and `secret`:
    /// the set is marked invalid until the run's last ``saveUnits(_:removing:last:)``,
    /// so that a run stopped between its first write and its units' save
    /// leaves a set the next run does not trust; `fresh` drops the units kept
    /// and the keys voided (a run that parses every unit). One transaction.
    /// The run's saves go to the pages when the set holds no unit (a run
    /// that makes it whole, written once in digest order), else to the
    /// changes.
    package func startDigests(fingerprint: String, secret: [UInt8], fresh: Bool) throws(StoreError) {
        let action = "starting the record digests"
        try connection.begin(action)
        do throws(StoreError) {
            if fresh {
                try connection.execute(
                    "DROP TABLE IF EXISTS _sluice_unit_pages; DROP TABLE IF EXISTS _sluice_unit_changes; "
                        + "DROP TABLE IF EXISTS _sluice_voided_keys", action)
            }
            try prepareDigestTables(action)
            unitsToPages = try connection.strings(
                "SELECT 1 FROM _sluice_unit_pages UNION ALL SELECT 1 FROM _sluice_unit_changes LIMIT 1", column: 0,
                action
            ).isEmpty
            try connection.execute("DELETE FROM _sluice_digest_covered", action)
            let state = try SQLiteStatement(
                connection,
                "INSERT INTO _sluice_digest_state (id, secret, fingerprint, valid, units, bytes) "
                    + "VALUES (1, ?, ?, 0, 0, 0) ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, "
                    + "fingerprint = excluded.fingerprint, valid = 0, units = CASE WHEN ? THEN 0 ELSE units END, "
                    + "bytes = CASE WHEN ? THEN 0 ELSE bytes END", action)
            state.bind(1, secret)
            state.bind(2, fingerprint)
            state.bind(3, Int64(fresh ? 1 : 0))
            state.bind(4, Int64(fresh ? 1 : 0))
            try state.run(action)
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Marks the digest set invalid (a run writes without keeping digests),
    /// so that the next run parses every unit. Nothing when there is none.
    package func voidDigests() throws(StoreError) {
        guard try tableExists("_sluice_digest_state") else { return }
        try connection.execute("UPDATE _sluice_digest_state SET valid = 0", "voiding the record digests")
        if try tableExists("_sluice_digest_covered") {
            try connection.execute("DELETE FROM _sluice_digest_covered", "voiding the record digests")
        }
    }

    /// Records that the set covers `entities` (``DigestSet/covered``), in
    /// one transaction.
    package func markCovered(_ entities: [String]) throws(StoreError) {
        let action = "recording the tables the record digests cover"
        guard !entities.isEmpty, try tableExists("_sluice_digest_covered") else { return }
        let insert = try SQLiteStatement(
            connection, "INSERT OR IGNORE INTO _sluice_digest_covered (entity) VALUES (?)", action)
        try connection.begin(action)
        do throws(StoreError) {
            for entity in entities {
                insert.rewind()
                insert.bind(1, entity)
                try insert.run(action)
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Calls `body` with each stored unit in digest order: the pages' units
    /// with the changes saved since merged in. One scan of each table.
    package func forEachUnit(_ body: (StoredUnit) throws(StoreError) -> Void) throws(StoreError) {
        let action = "reading the record digests"
        guard try tableExists("_sluice_unit_pages") else { return }
        let changes = try UnitChangeCursor(self, action)
        let pages = try SQLiteStatement(connection, "SELECT units FROM _sluice_unit_pages ORDER BY first", action)
        while try pages.step(action) {
            let whole = try pages.withBlob(0) { (page) throws(StoreError) in
                try UnitPage.forEach(page) { (unit) throws(StoreError) in
                    if let change = try changes.take(upTo: unit.digest, body) {
                        if let changed = change { try body(changed) }
                    } else {
                        try body(unit)
                    }
                }
            }
            guard whole else { throw malformedPage(action) }
        }
        _ = try changes.take(upTo: nil, body)
    }

    /// Deletes the units of `removed` and inserts (or replaces) those of
    /// `saved`, in one transaction; the `last` call of a run also marks the
    /// set valid, forgets the voided keys (the run parsed every unit that
    /// produced one) and folds the changes into the pages when they have
    /// outgrown their share (``foldChangesIfLarge(_:)``). A run that makes
    /// the set (``unitsToPages``) writes the pages, each once when it only
    /// adds units in digest order; any other writes the changes
    /// (``saveChanges(_:_:)``). Each page a change falls in is read, merged
    /// and written again. The state row's units and bytes change by what
    /// the set did.
    package func saveUnits(_ saved: [StoredUnit], removing removed: [UnitDigest], last: Bool) throws(StoreError) {
        let action = "saving the record digests"
        // In digest order; of one digest's changes, removals first, then the
        // saves in their order, so that the last save wins as it did per row.
        var changes = removed.map { (digest: $0, unit: StoredUnit?.none) } + saved.map { ($0.digest, $0) }
        if !changes.indices.dropFirst().allSatisfy({ changes[$0 - 1].digest < changes[$0].digest }) {
            let order = changes.indices.sorted {
                changes[$0].digest != changes[$1].digest ? changes[$0].digest < changes[$1].digest : $0 < $1
            }
            changes = order.map { changes[$0] }
        }
        try connection.begin(action)
        do throws(StoreError) {
            let sums: (units: Int, bytes: Int64)
            if unitsToPages {
                let pages = try UnitPageStatements(connection, table: "_sluice_unit_pages", pageSize: pageSize, action)
                try apply(changes[...], to: pages, action)
                sums = (pages.units, pages.bytes)
            } else {
                sums = try saveChanges(changes, action)
            }
            if sums.units != 0 || sums.bytes != 0 {
                try connection.execute(
                    "UPDATE _sluice_digest_state SET units = units + \(sums.units), bytes = bytes + \(sums.bytes)",
                    action)
            }
            if last {
                try connection.execute(
                    "UPDATE _sluice_digest_state SET valid = 1; DELETE FROM _sluice_voided_keys", action)
                try foldChangesIfLarge(action)
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Applies `changes` (in digest order; of one digest's the last wins) to
    /// the pages of `pages`' table: each page a change falls in is read,
    /// merged and written again.
    func apply(
        _ changes: ArraySlice<(digest: UnitDigest, unit: StoredUnit?)>, to pages: UnitPageStatements, _ action: String
    ) throws(StoreError) {
        try rewritePages(of: pages, for: changes, action) { kept, range in UnitPage.merge(kept, changes[range]) }
    }

    /// Rewrites each page of `pages`' table that `changes` (in digest
    /// order) fall in with what `merge` makes of its entries and the range
    /// of `changes` that falls in it.
    func rewritePages(
        of pages: UnitPageStatements, for changes: ArraySlice<(digest: UnitDigest, unit: StoredUnit?)>,
        _ action: String, merge: ([UnitPage.Span], Range<Int>) throws(StoreError) -> [UnitPage.Piece]
    ) throws(StoreError) {
        var start = changes.startIndex
        while start < changes.endIndex {
            // The page the change falls in: the last whose first digest is
            // not after it, else the first; its changes end at the next page.
            let page = try pages.holding(changes[start].digest)
            var end = start + 1
            while end < changes.endIndex && page.next.map({ changes[end].digest < $0 }) ?? true { end += 1 }
            let old = page.bytes ?? []
            guard let kept = old.withUnsafeBytes({ UnitPage.spans($0) }) else { throw malformedPage(action) }
            if let first = page.first { try pages.delete(first, units: kept.count, bytes: old.count) }
            try pages.write(try merge(kept, start..<end), from: old)
            start = end
        }
    }

    func malformedPage(_ action: String) -> StoreError {
        StoreError(
            path: connection.path, action: action, message: "a page of record digests is malformed", cause: .corrupt)
    }

    /// What `sluice status` shows of the digest set on `connection`, nil
    /// when the store keeps none. A few rows read.
    static func digestStatus(_ connection: SQLiteConnection) throws(StoreError) -> DigestStatus? {
        let action = "reading the record digests"
        guard try tableExists("_sluice_digest_state", connection) else { return nil }
        let sums = try Self.sums(connection, action)
        let state = try SQLiteStatement(
            connection, "SELECT valid, \(sums.units), \(sums.bytes) FROM _sluice_digest_state WHERE id = 1", action)
        guard try state.step(action) else { return nil }
        return DigestStatus(units: Int(state.int64(1)), bytes: state.int64(2), valid: state.int64(0) != 0)
    }

    func tableExists(_ name: String) throws(StoreError) -> Bool {
        try Self.tableExists(name, connection)
    }

    private static func tableExists(_ name: String, _ connection: SQLiteConnection) throws(StoreError) -> Bool {
        try !connection.strings(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = \(literal(name))", column: 0,
            "reading the store's tables"
        ).isEmpty
    }
}
