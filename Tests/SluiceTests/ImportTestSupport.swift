import Foundation
import Sluice
import SluiceTestSupport

/// Imports `text` (an input file named `name`) with `yaml` into `store`.
@discardableResult
func importText(
    _ yaml: String, _ name: String, _ text: String, store: String, hooks: [String: EntityHooks] = [:]
) throws -> ImportReport {
    try Importer(mapping: Mapping.parse(yaml: yaml), store: store, hooks: hooks).runBlocking(inputs: [
        TestPaths.file(name, text)
    ])
}

func newStore() -> String { TestPaths.temporaryDirectory().appendingPathComponent("peer.sqlite").path }

/// Imports JSON Lines text with `yaml` and `options` into `store`.
@discardableResult
func sync(
    _ yaml: String, _ text: String, store: String, options: ImportOptions = ImportOptions(), name: String = "in.jsonl"
) throws -> ImportReport {
    try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options).runBlocking(inputs: [
        TestPaths.file(name, text)
    ])
}

func lines(_ ids: some Sequence<Int>, _ name: (Int) -> String = { "n\($0)" }) -> String {
    ids.map { "{\"id\": \($0), \"name\": \"\(name($0))\", \"note\": \"x\"}" }.joined(separator: "\n")
}

/// Every table's rows, for comparing stores.
func dump(_ store: String, _ tables: [String]) -> [[[String?]]] {
    let reader = StoreReader(store)
    return tables.map { reader.rows("SELECT * FROM \($0) ORDER BY 1") }
}
