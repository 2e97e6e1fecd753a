// Getting started: one import, awaited, and its report.
// snippet.hide
import Sluice

let mapping = try Mapping.parse(yaml: "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer}}}")
// snippet.show
let importer = try Importer(mapping: mapping, store: "site.sqlite")
let report = try await importer.run(inputs: ["Posts.xml.bz2"])
print(report[entity: "Post"]?.inserted ?? 0)
