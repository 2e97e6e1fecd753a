import Foundation
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

    @Test func recordsBelowTheTopLevelParseOnOneThread() throws {
        let nested = try CompiledMapping(
            Mapping.parse(yaml: "entities:\n  Event: {records: \"$.events[*]\", key: id, attributes: {id: integer}}"))
        #expect(ParseWorkers.refusal(nested, options(threads: 2)) == "records below the top level")
    }
}
