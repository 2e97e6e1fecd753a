// The mapping reference: Swift hooks per entity.
// snippet.hide
import Foundation
import Sluice

let mapping = try Mapping.parse(
    yaml: "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer, Tags: string}}}")
// snippet.show
let hooks = [
    "Post": EntityHooks(
        shouldImport: { record in record.text(at: "@PostTypeId") != "7" },
        didImport: { row in print(row["Id"] as Any) },
        valueHandlers: ["Tags": { raw in raw.text.map { .text($0.replacingOccurrences(of: "><", with: ",")) } }])
]
let importer = try Importer(mapping: mapping, store: "site.sqlite", hooks: hooks)
