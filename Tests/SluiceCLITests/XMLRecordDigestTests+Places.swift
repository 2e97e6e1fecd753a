import Foundation
import SluiceTestSupport
import Testing

/// A run that skips reads the selected elements of an XML file from their
/// places (docs/record-digests.md, "The selected units read at their
/// places"): the hash pass reads the file once and checks the document
/// around the elements; the probe and the parse read only the new and
/// changed elements, each parsed after its context (the DOCTYPE, the open
/// ancestors' start tags), and leave what a full run leaves, failing where
/// it fails. Each case measures the bytes read: a whole read more than
/// the hash pass's would take it over twice the file.
extension XMLRecordDigestTests {
    /// Event `id` over two lines, with `pad` bytes of an attribute the
    /// mapping ignores (so that the file is much larger than the store), and
    /// `before` on its line before it.
    static func paddedEvent(_ id: Int, score: Int? = nil, title: String? = nil, before: String = "") -> String {
        before
            + event(id, score: score, title: title)
            .replacingOccurrences(of: " kind=", with: " pad=\"\(String(repeating: "x", count: 2_000))\"\n kind=")
    }

    /// The size of the file at `path`.
    func size(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// The next day's document with `--delete-missing`: its 40 new and
    /// changed elements of 3,000 are probed and parsed from their places, so
    /// the run reads the file about once (the hash pass), where it read it
    /// three times (hash pass, probe, parse); the store ends as a full run
    /// leaves it. Read in chunks of 1,000 bytes: start tags cut (carried
    /// into the next chunk by the hash pass), elements read from their
    /// places in pieces; the digests the parse kept of them match those the
    /// next run's hash pass finds (it parses none).
    @Test func aNextDayReadsItsXMLFileOnce() throws {
        let day0 = file(Self.document([("<group>", (1...3_000).map { Self.paddedEvent($0) })]))
        var events = (1...3_000).filter { $0 % 150 != 0 }.map {
            Self.paddedEvent($0, score: $0 % 100 == 0 ? -$0 : nil)
        }
        events += (3_001...3_020).map { Self.paddedEvent($0) }
        let next = file(Self.document([("<group>", events)]))
        let (skipping, parsing) = (store(), store())
        #expect(try run(skipping, [day0]).status == 0)
        #expect(try run(parsing, ["--no-skip", day0]).status == 0)
        let measured = try bytesRead(
            [
                "import", "--mapping", Self.mapping, "--into", skipping, "--stats-json", skipping + ".json",
                "--chunk-size", "1000", "--delete-missing", next,
            ])
        #expect(measured.status == 0)
        // 20 gone (multiples of 150), 20 changed (multiples of 100 but not of 300).
        #expect(try unchangedRecords(skipping) == 3_000 - 20 - 20)
        let size = try size(next)
        #expect(measured.read > size && measured.read < size * 2, "read \(measured.read) of \(size)")
        #expect(try run(parsing, ["--no-skip", "--delete-missing", next]).status == 0)
        #expect(rows(skipping) == rows(parsing))
        #expect(try run(skipping, [next]).status == 0)
        #expect(try unchangedRecords(skipping) == 3_000 - 20 + 20)
    }

    /// A changed element that does not parse, read at its place after
    /// non-ASCII text on its line (libxml2 counts columns in characters, the
    /// places in bytes): the run fails with the message (file, line, column,
    /// byte, record number) and exit status of a full run on a copy of the
    /// store, having read the file less than twice: the hash pass, the
    /// input's identity (its first MiB), the probe's two elements, then the
    /// parse of every element at its place up to the broken one, 55% in
    /// (a full read of the probe took it over twice).
    @Test func aBrokenElementReadAtItsPlaceFailsAsAFullRunFails() throws {
        let target = store()
        var events = (1...2_000).map { Self.paddedEvent($0, before: "<!--\u{E9}\u{E9}-->") }
        let day0 = file(Self.document([("<group>", events)]))
        for _ in 0..<2 { #expect(try run(target, [day0]).status == 0) }
        #expect(try unchangedRecords(target) == 2_000, "the second run skips every element")
        events[1_099] = events[1_099].replacingOccurrences(of: "</tag>", with: "</tg>")
        events[100] = Self.paddedEvent(101, score: 7, before: "<!--\u{E9}\u{E9}-->")
        let broken = file(Self.document([("<group>", events)]))
        let copy = store()
        try FileManager.default.copyItem(atPath: target, toPath: copy)
        let measured = try bytesRead(["import", "--mapping", Self.mapping, "--into", target, broken])
        let skipping = try run(target, [broken])
        let full = try run(copy, ["--no-skip", broken])
        #expect(measured.status != 0 && skipping.status == measured.status && skipping.status == full.status)
        #expect(skipping.stderr == full.stderr, "\(skipping.stderr)\n\(full.stderr)")
        // The XML declaration, the root and the group take 3 lines; each event 2.
        #expect(skipping.stderr.contains("\(broken):\(3 + 1_099 * 2 + 2):"), "\(skipping.stderr)")
        #expect(skipping.stderr.contains("record 1100"), "\(skipping.stderr)")
        let size = try size(broken)
        #expect(measured.read < size * 2, "read \(measured.read) of \(size)")
    }

    /// What the context declares still applies to an element read at its
    /// place: the DOCTYPE's attribute type (`title` NMTOKENS: libxml2
    /// collapses its spaces) and the namespace prefixes the root and the
    /// group declare (an element that uses `p:` and `q:`); the store holds
    /// what a full run gives, the file read less than twice.
    @Test func whatTheContextDeclaresAppliesToAnElementReadAtItsPlace() throws {
        let doctype = "<!DOCTYPE events [\n<!ATTLIST event title NMTOKENS #IMPLIED>\n]>\n"
        let group = "<group xmlns:q=\"urn:sluice:q\">"
        func day(_ changed: Int) -> String {
            let events = (1...1_000).map {
                Self.paddedEvent($0, score: $0 % changed == 0 ? -$0 : nil, title: "  spaced   out \($0) ")
                    .replacingOccurrences(of: "<tag>", with: "<q:note>n</q:note><tag>")
            }
            return file(Self.document([(group, events)], doctype: doctype))
        }
        let (day0, day1) = (day(100_000), day(100))
        let (skipping, parsing) = (store(), store())
        for target in [skipping, parsing] { #expect(try run(target, [day0]).status == 0) }
        let measured = try bytesRead(
            ["import", "--mapping", Self.mapping, "--into", skipping, "--stats-json", skipping + ".json", day1])
        #expect(measured.status == 0)
        #expect(try unchangedRecords(skipping) == 990)
        let size = try size(day1)
        #expect(measured.read < size * 2, "read \(measured.read) of \(size)")
        #expect(try run(parsing, ["--no-skip", day1]).status == 0)
        #expect(rows(skipping) == rows(parsing))
        let titles = StoreReader(skipping).rows("SELECT title FROM \"Event\" WHERE id = 200")
        #expect(titles.first?.first == "spaced out 200", "\(titles)")
    }
}
