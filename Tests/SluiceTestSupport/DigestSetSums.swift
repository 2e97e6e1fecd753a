import SluiceBatching
import SluiceStore

/// The units and bytes of the SQLite digest set at `path`, counted over
/// what a run reads of it (its pages with its changes merged in, each unit's
/// entry 21 bytes and its keys), and as its state row keeps them; nil when
/// the store keeps no set or cannot be read.
public func sqliteDigestSums(_ path: String) -> (counted: (units: Int, bytes: Int64), kept: (units: Int, bytes: Int64))?
{
    guard let status = try? SQLiteStore.status(path: path).digests, let store = try? SQLiteStore(path: path) else {
        return nil
    }
    var counted = (units: 0, bytes: Int64(0))
    do {
        try store.forEachUnit { unit in
            counted.units += 1
            counted.bytes += Int64(21 + unit.keys.count)
        }
    } catch {
        return nil
    }
    return (counted, (status.units, status.bytes))
}
