import Foundation
import Sluice
import SluiceBatching
import SluiceStore

/// What a memory store holds, committed or not: its tables (entities and
/// link tables), checkpoints, run ledger and the keys runs saw.
struct MemoryState {
    var tables: [String: MemoryTable] = [:]
    var checkpoints: [String: Checkpoint] = [:]
    var runs: [RunRecord] = []
    /// The keys the run saw, by entity: an entity without an entry has no
    /// seen-keys table.
    var seenKeys: [String: Set<[MemoryValue]>] = [:]
}

/// The memory store's "file": the committed state that outlives each run's
/// ``MemoryStore``, as a SQLite file outlives its connections. A test makes
/// one and opens a store on it for every run. Safe to use from any thread.
final class MemoryDatabase: @unchecked Sendable {
    /// What messages call it.
    let name: String
    private let lock = NSLock()
    private var committed = MemoryState()

    init(name: String) { self.name = name }

    /// The committed state. O(1): the copy shares storage until written.
    var state: MemoryState {
        lock.lock()
        defer { lock.unlock() }
        return committed
    }

    /// Makes `state` the committed state.
    func commit(_ state: MemoryState) {
        lock.lock()
        defer { lock.unlock() }
        committed = state
    }

    /// A store on this database for one run (see ``Importer/openStore``).
    var opener: Importer.StoreOpener {
        { [self] options, dryRun in MemoryStore(self, options: options, dryRun: dryRun) }
    }

    /// Every table with its column names and declared types, and its rows
    /// with each value as SQLite prints it (blobs in lowercase hex), for
    /// the conformance harness.
    func dump() -> [String: (names: [String], types: [String], rows: [[String?]])] {
        state.tables.mapValues { table in
            let rows = table.rows.values.map { row in
                zip(table.columns, row).map { column, value -> String? in
                    guard let text = value.text else { return nil }
                    if column.affinity == .blob { return text.map { String(format: "%02x", $0) }.joined() }
                    return String(decoding: text, as: UTF8.self)
                }
            }
            return (table.columns.map(\.name), table.columns.map(\.affinity.rawValue), rows)
        }
    }
}
