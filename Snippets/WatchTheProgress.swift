// Getting started: the progress of a run as an AsyncSequence.
// snippet.hide
import Sluice

let mapping = try Mapping.parse(yaml: "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer}}}")
let importer = try Importer(mapping: mapping, store: "site.sqlite")
// snippet.show
for try await event in importer.events(inputs: ["Posts.xml.bz2"]) {
    switch event {
    case .progress(let progress): print(progress.phase, progress.secondsLeft ?? 0)
    case .finished(let report): print(report.tables.map(\.name))
    }
}
