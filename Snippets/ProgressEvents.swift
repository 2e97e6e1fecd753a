// Importer.events(inputs:)'s documentation: each event of a run.
// snippet.hide
import Sluice

let mapping = try Mapping.parse(yaml: "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer}}}")
let importer = try Importer(mapping: mapping, store: "site.sqlite")
// snippet.show
for try await event in importer.events(inputs: ["Posts.xml.bz2"]) {
    switch event {
    case .progress(let progress): print(progress.phase, progress.records)
    case .finished(let report): print(report[entity: "Post"]?.inserted ?? 0)
    }
}
