import SluiceBatching
import SluiceRecords

/// The statements that read and write one table of unit pages,
/// `_sluice_unit_pages` or `_sluice_unit_changes` (``SQLiteStore``'s record
/// digests, ``UnitPage``), prepared once per save, and how many entries and
/// bytes the pages gained (or lost) through them.
final class UnitPageStatements {
    /// A page found for a digest: its first digest and bytes (nil when the
    /// table is empty), and the first digest of the page after it.
    struct Found {
        var first: [UInt8]?
        var bytes: [UInt8]?
        var next: UnitDigest?
    }

    private let action: String
    private let atOrBefore: SQLiteStatement
    private let firstPage: SQLiteStatement
    private let after: SQLiteStatement
    private let remove: SQLiteStatement
    private let insert: SQLiteStatement
    /// The most bytes of entries a page is written with
    /// (``UnitPage/rowBytes(pageSize:)``).
    private let rowBytes: Int
    /// Units the pages written hold, less those of the pages deleted.
    private(set) var units = 0
    /// Bytes of units the pages written hold, less those of the pages deleted.
    private(set) var bytes: Int64 = 0

    init(_ connection: SQLiteConnection, table: String, pageSize: Int, _ action: String) throws(StoreError) {
        self.action = action
        rowBytes = UnitPage.rowBytes(pageSize: pageSize)
        atOrBefore = try SQLiteStatement(
            connection, "SELECT first, units FROM \(table) WHERE first <= ? ORDER BY first DESC LIMIT 1", action)
        firstPage = try SQLiteStatement(connection, "SELECT first, units FROM \(table) ORDER BY first LIMIT 1", action)
        after = try SQLiteStatement(
            connection, "SELECT first FROM \(table) WHERE first > ? ORDER BY first LIMIT 1", action)
        remove = try SQLiteStatement(connection, "DELETE FROM \(table) WHERE first = ?", action)
        insert = try SQLiteStatement(connection, "INSERT INTO \(table) (first, count, units) VALUES (?, ?, ?)", action)
    }

    /// The page `digest` falls in: the last whose first digest is not after
    /// it, else the first page. Two lookups on the table's key.
    func holding(_ digest: UnitDigest) throws(StoreError) -> Found {
        atOrBefore.rewind()
        atOrBefore.bind(1, digest.bytes)
        var found = Found()
        if try atOrBefore.step(action) {
            found.first = atOrBefore.blob(0)
            found.bytes = atOrBefore.blob(1)
        } else {
            firstPage.rewind()
            if try firstPage.step(action) {
                found.first = firstPage.blob(0)
                found.bytes = firstPage.blob(1)
            }
        }
        atOrBefore.rewind()
        firstPage.rewind()
        guard let first = found.first else { return found }
        after.rewind()
        after.bind(1, first)
        if try after.step(action) { found.next = after.blob(0).withUnsafeBytes { UnitDigest(bytes: $0) } }
        after.rewind()
        return found
    }

    /// Deletes the page whose first digest is `first`, which held `units`
    /// units in `bytes` bytes.
    func delete(_ first: [UInt8], units: Int, bytes: Int) throws(StoreError) {
        remove.rewind()
        remove.bind(1, first)
        _ = try remove.run(action)
        self.units -= units
        self.bytes -= Int64(bytes)
    }

    /// Writes `pieces` (in digest order; the kept ones spans of the old
    /// page `old`) as pages of at most ``UnitPage/capacity`` units and
    /// `rowBytes` bytes (a longer entry alone on its page), as even as they
    /// divide. A kept unit's entry is copied as it was. O(pieces).
    func write(_ pieces: [UnitPage.Piece], from old: [UInt8]) throws(StoreError) {
        guard !pieces.isEmpty else { return }
        let total = pieces.reduce(0) { $0 + UnitPage.entryBytes($1) }
        let pages = max((pieces.count + UnitPage.capacity - 1) / UnitPage.capacity, (total + rowBytes - 1) / rowBytes)
        var bytes: [UInt8] = []
        var lower = 0
        var page = 0
        while lower < pieces.count {
            let share = (pieces.count - lower + max(1, pages - page) - 1) / max(1, pages - page)
            var upper = lower
            bytes.removeAll(keepingCapacity: true)
            while upper < pieces.count && upper - lower < share {
                let piece = pieces[upper]
                guard upper == lower || bytes.count + UnitPage.entryBytes(piece) <= rowBytes else { break }
                switch piece {
                case .kept(let span): bytes += old[span.bytes]
                case .saved(let unit): UnitPage.append(unit, to: &bytes)
                case .removal(let digest): UnitPage.appendRemoval(digest, to: &bytes)
                }
                upper += 1
            }
            insert.rewind()
            insert.bind(1, pieces[lower].digest.bytes)
            insert.bind(2, Int64(upper - lower))
            insert.bind(3, bytes)
            _ = try insert.run(action)
            self.units += upper - lower
            self.bytes += Int64(bytes.count)
            lower = upper
            page += 1
        }
    }
}
