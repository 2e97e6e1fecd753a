// The Importer's documentation: a mapping from text, an import, its report.
// snippet.hide
import Sluice

let text = "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer}}}"
// snippet.show
let mapping = try Mapping.parse(yaml: text, file: "mapping.yml")
let importer = try Importer(mapping: mapping, store: "dump.sqlite")
let report = try await importer.run(inputs: ["Posts.xml", "Users.xml.bz2"])
print(report[entity: "Post"]?.inserted ?? 0)
