import Foundation
import Sluice

/// A new empty directory for one test's store and inputs, in this test
/// process's own directory, which is removed when the process exits (the
/// tests left 14 directories of 3 MB behind each run).
func temporaryDirectory() -> URL {
    let url = ProcessDirectory.url.appendingPathComponent(UUID().uuidString)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The directory that holds every ``temporaryDirectory()`` of this process.
enum ProcessDirectory {
    static let url: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-app-\(UUID().uuidString)")
        atexit { try? FileManager.default.removeItem(at: ProcessDirectory.url) }
        return url
    }()
}

/// A JSON Lines file of `ids` in `directory`, each record `{"id": N, "name": "…"}`; its path.
func events(_ ids: some Sequence<Int>, in directory: URL, name: String = "events.jsonl") throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(ids.map { "{\"id\": \($0), \"name\": \"event number \($0)\"}\n" }.joined().utf8).write(to: url)
    return url.path
}

/// An importer of those events into `store`, `rows` a batch, in `order`;
/// resuming the last run with `resume`.
func importer(_ store: String, order: ApplyOrder = .key, rows: Int = 200, resume: Bool = false) throws -> Importer {
    var options = ImportOptions()
    options.batch.maxRows = rows
    options.order = order
    options.resume = resume
    let yaml = "entities: {Event: {records: $, key: id, attributes: {id: integer, name: string}}}"
    return try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options)
}

/// The rows `store` holds in `table`, from its status.
func rows(_ store: String, _ table: String = "Event") throws -> Int {
    try Status.read(store: store).tables.first { $0.name == table }?.rows ?? 0
}

/// The last run's status in `store`'s ledger.
func lastRun(_ store: String) throws -> RunStatus? {
    try Status.read(store: store).runs.first?.status
}

/// A value one thread sets and another reads.
final class Box<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A value one thread sets and another waits for.
final class Signal: @unchecked Sendable {
    private let condition = NSCondition()
    private var raised = false

    func raise() {
        condition.lock()
        raised = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() {
        condition.lock()
        while !raised { condition.wait() }
        condition.unlock()
    }

    var isRaised: Bool {
        condition.lock()
        defer { condition.unlock() }
        return raised
    }
}
