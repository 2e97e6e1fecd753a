// The README's "As a library": an importer, its progress as an
// AsyncSequence, and bytes that arrive in pieces.
import Sluice

// snippet.hide
let (pieces, delivery) = AsyncStream.makeStream(of: [UInt8].self)
delivery.finish()
// snippet.show
let importer = try Importer(mapping: Mapping.load(path: "mapping.yml"), store: "site.sqlite")

// Progress through every phase as an AsyncSequence, then the report.
for try await event in importer.events(inputs: ["Posts.xml.bz2"]) {
    switch event {
    case .progress(let progress): print(progress.phase, progress.records, progress.secondsLeft ?? 0)
    case .finished(let report): print(report.tables.map(\.name))
    }
}

// Bytes that arrive in pieces (a download, a queue), from async code.
let report = try await importer.run(name: "feed", format: .jsonl, chunks: pieces)
