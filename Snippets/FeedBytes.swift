// Getting started: bytes that arrive in pieces, fed from async code.
// snippet.hide
import Sluice

let mapping = try Mapping.parse(yaml: "entities: {Post: {records: /posts/row, key: Id, attributes: {Id: integer}}}")
let importer = try Importer(mapping: mapping, store: "site.sqlite")
// snippet.show
// Whatever receives the pieces (a download's delegate, a queue's consumer) yields them.
let (pieces, delivery) = AsyncStream.makeStream(of: [UInt8].self)
Task {
    delivery.yield(Array(#"<posts><row Id="1" Title="first"/>"#.utf8))
    delivery.yield(Array("</posts>".utf8))
    delivery.finish()
}
let report = try await importer.run(name: "feed", format: .xml, chunks: pieces)
