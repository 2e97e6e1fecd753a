import Foundation
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import Sluice

/// Which runs parse on several threads (``ParseWorkers/refusal(_:_:)``):
/// runs that keep record digests do, as runs that keep none do, of JSON
/// Lines and of XML.
@Suite struct ParseWorkersTests {
    let events = """
        entities:
          Event: {records: $, key: id, attributes: {id: integer, kind: string},
                  relationships: {actor: {entity: Actor, source: actor}}}
          Actor: {key: id, attributes: {id: integer}}
        """

    func options(threads: Int) -> ImportOptions {
        var options = ImportOptions()
        options.threads = threads
        return options
    }

    @Test func aRunThatKeepsRecordDigestsParsesOnSeveralThreads() throws {
        let compiled = try CompiledMapping(Mapping.parse(yaml: events))
        #expect(DigestPolicy.refusal(compiled, options(threads: 2), formats: [.jsonl]) == nil)
        #expect(ParseWorkers.refusal(compiled, options(threads: 2)) == nil)
        #expect(ParseWorkers.refusal(compiled, options(threads: 1)) == "one thread")
    }

    /// XML records parse on several threads, in runs that keep record
    /// digests too (a run that skips some parses XML on one thread: the
    /// parse side decides it per input, `ParseSide.beginSplit`).
    @Test func xmlParsesOnSeveralThreads() throws {
        let xml = try CompiledMapping(
            Mapping.parse(yaml: "entities:\n  Event: {records: /events/event, key: id, attributes: {id: integer}}"))
        #expect(DigestPolicy.refusal(xml, options(threads: 2), formats: [.xml]) == nil)
        #expect(ParseWorkers.refusal(xml, options(threads: 2)) == nil)
    }

    /// Records below the top level parse on several threads when each is a
    /// unit of the scanner: the elements of one JSON document, cut into
    /// items placed after the path to their first element
    /// (`ParseSide.beginSplit`); not records nested inside the values of
    /// JSON Lines, which parse on the parse side.
    @Test func oneJSONDocumentParsesOnSeveralThreads() throws {
        let nested = try CompiledMapping(
            Mapping.parse(yaml: "entities:\n  Event: {records: \"$.events[*]\", key: id, attributes: {id: integer}}"))
        let options = options(threads: 2)
        #expect(ParseWorkers.refusal(nested, options) == nil)
        let exchange = PipelineExchange(limits: options.batch, tables: 1, cancelled: Flag())
        let side = ParseSide(
            compiled: nested, options: options, exchange: exchange, identities: [:], resumePoints: [:],
            resumedStreams: [:], spill: ValueSpill(directory: NSTemporaryDirectory()))
        let workers = try #require(
            ParseWorkers(
                count: 2, compiled: nested, options: options, exchange: exchange, spill: side.spill, recorder: nil))
        defer { workers.stop() }
        side.workers = workers
        #expect(try side.beginSplit(name: "events.json", format: .json, compressed: false))
        #expect(side.split?.documentContext == [])
        side.split = nil
        #expect(try side.beginSplit(name: "events.jsonl", format: .jsonl, compressed: false) == false)
    }
}
