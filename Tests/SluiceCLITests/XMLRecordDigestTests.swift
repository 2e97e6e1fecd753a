import Foundation
import SluiceTestSupport
import Testing

/// Runs over XML that skip the elements whose digests the store kept
/// (docs/record-digests.md), by the binary: each must leave the store a run
/// that parses everything (`--no-skip`) leaves, and a change of what an
/// element's context declares (its DOCTYPE, its ancestors' namespaces)
/// parses the elements it reaches again.
@Suite struct XMLRecordDigestTests {
    static let mapping = TestPaths.file(
        "xml-digests.yml",
        """
        entities:
          Event:
            records: /events/group/event
            key: id
            attributes: {id: integer, kind: string, title: string, score: integer}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tag[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string}
          Tag:
            key: name
            attributes: {name: string}
        """)
    static let tables = ["Event", "Actor", "Tag", "Event_tags"]

    /// Event `id` as one line: an element whose actor's login is in the
    /// namespace `p`.
    static func event(_ id: Int, score: Int? = nil, title: String? = nil) -> String {
        let title = title ?? "t\(id)"
        return #"<event id="\#(id)" kind="k\#(id % 3)" title="\#(title)" score="\#(score ?? id * 2)">"#
            + #"<actor id="\#(id % 8)" p:login="user\#(id % 8)"/><tag>t\#(id % 4)</tag></event>"#
    }

    /// A document of `groups` (each group's start tag and its events' lines),
    /// after `doctype`: the root declares the namespace `p`.
    static func document(_ groups: [(tag: String, events: [String])], doctype: String = "") -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + doctype
        text += "<events xmlns:p=\"urn:sluice:people\">\n"
        for group in groups { text += group.tag + "\n" + group.events.map { $0 + "\n" }.joined() + "</group>\n" }
        return text + "</events>\n"
    }

    func file(_ text: String) -> String { TestPaths.file("in-\(UUID().uuidString).xml", text) }

    func store() -> String { TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path }

    func run(_ store: String, _ arguments: [String]) throws -> CommandResult {
        try runCommand(
            sluice, ["import", "--mapping", Self.mapping, "--into", store, "--stats-json", store + ".json"] + arguments)
    }

    func unchangedRecords(_ store: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: store + ".json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["unchangedRecords"] as? Int ?? -1
    }

    func rows(_ store: String) -> [[[String?]]] {
        let reader = StoreReader(store)
        return Self.tables.map { reader.rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
    }

    /// Applies each step to a store that skips and to one that parses
    /// everything, requiring both to succeed with the same rows after each;
    /// returns the unchanged records each skipping step reported.
    func differential(_ steps: [[String]]) throws -> [Int] {
        let (skipping, parsing) = (store(), store())
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            let skipped = try run(skipping, step)
            #expect(skipped.status == 0, "\(step): \(skipped.stderr)")
            unchanged.append(try unchangedRecords(skipping))
            let parsed = try run(parsing, ["--no-skip"] + step)
            #expect(parsed.status == 0, "\(step): \(parsed.stderr)")
            #expect(rows(skipping) == rows(parsing), "after step \(index + 1): \(step)")
        }
        return unchanged
    }

    /// The same document again parses no element; the next day's parses
    /// only its new and changed elements, in two groups, whatever the chunks
    /// cut (a chunk of 5 bytes cuts start tags: their first bytes are
    /// carried into the next chunk, and hashed and parsed with the rest).
    @Test func aSecondRunParsesOnlyTheChangedElements() throws {
        let tags = ["<group>", "<group name=\"second\">"]
        let day0 = file(
            Self.document(tags.indices.map { group in (tags[group], (1...100).map { Self.event($0 + 1000 * group) }) }))
        let day1Groups = tags.indices.map { group in
            var events = (1...100).filter { $0 % 10 != 0 }.map {
                Self.event($0 + 1000 * group, score: $0 % 7 == 0 ? -$0 : nil)
            }
            events += (101...105).map { Self.event($0 + 1000 * group) }
            return (tags[group], Array(events.reversed()))
        }
        let day1 = file(Self.document(day1Groups))
        let unchanged = try differential([[day0], [day0], ["--chunk-size", "5", day1], [day1], [day0]])
        // Day 1 drops 20 elements, changes 26 of those it keeps (multiples
        // of 7 but not of 10) and adds 10; day 0 again brings back 46.
        #expect(unchanged == [0, 200, 200 - 20 - 26, 190, 200 - 20 - 26])
    }

    /// A record that comes twice with the same attributes but other links
    /// (its tags, then none: an element without `tag` children clears its
    /// links) is parsed again when the two swap places, though both elements
    /// are unchanged: the last one's list decides the links, so their units
    /// are pinned by the run that parsed them (the entity's rows agree; the
    /// link lists do not).
    @Test func aRecordRepeatedWithOtherLinksIsParsedWhenItsOccurrencesSwap() throws {
        let attributes = #"id="1" kind="k" title="t" score="2"><actor id="1" p:login="u1"/>"#
        let tagged = "<event " + attributes + "<tag>x</tag><tag>y</tag></event>"
        let untagged = "<event " + attributes + "</event>"
        let others = (2...5).map { Self.event($0) }
        let before = file(Self.document([("<group>", [tagged] + others + [untagged])]))
        let after = file(Self.document([("<group>", [untagged] + others + [tagged])]))
        let unchanged = try differential([[before], [after]])
        // The four other events are skipped; both occurrences of event 1 are parsed.
        #expect(unchanged == [0, 4])
    }

    /// In a run that skips, a changed element that does not parse is
    /// reported where it is in its file (line, column, byte, record number),
    /// word for word as a full run reports it.
    @Test func aBrokenChangedElementIsReportedWhereItIs() throws {
        let target = store()
        var events = (1...50).map { Self.event($0) }
        let day0 = file(Self.document([("<group>", events)]))
        for _ in 0..<2 {
            let result = try run(target, [day0])
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try unchangedRecords(target) == 50, "the second run skips every element")
        events[36] = events[36].replacingOccurrences(of: "</tag>", with: "</tg>")
        let broken = file(Self.document([("<group>", events)]))
        let copy = store()
        try FileManager.default.copyItem(atPath: target, toPath: copy)
        let skipping = try run(target, [broken])
        let full = try run(copy, ["--no-skip", broken])
        #expect(skipping.status != 0 && skipping.status == full.status)
        #expect(skipping.stderr == full.stderr, "\(skipping.stderr)\n\(full.stderr)")
        #expect(skipping.stderr.contains("\(broken):40:"), "\(skipping.stderr)")
        #expect(skipping.stderr.contains("record 37"), "\(skipping.stderr)")
    }

    /// A document damaged only between the elements it skips (character
    /// data, end tags, the end of the input) fails a run that skips as it
    /// fails a full run: the same exit code and message (file, line, column,
    /// record number), the same rows, from a store whose digests it trusts.
    /// The elements' titles hold non-ASCII characters, which libxml2 counts
    /// one column each, and the damage is on their line; every other case
    /// is read in chunks that cut start tags.
    @Test func damageBetweenSkippedElementsFailsAsAFullRunFails() throws {
        let events = (1...40).map { Self.event($0, title: "\u{E9}t\u{E9}\($0)") }
        let document = Self.document([("<group>", events)])
        let target = store()
        for _ in 0..<2 { #expect(try run(target, [file(document)]).status == 0) }
        #expect(try unchangedRecords(target) == 40, "the second run skips every element")
        func damaged(_ index: Int, _ text: String) -> String {
            var damaged = events
            damaged[index] += text
            return Self.document([("<group>", damaged)])
        }
        let cases: [(name: String, text: String, expected: String)] = [
            ("a bare &", damaged(9, " & "), ":13:105 (byte 1113), record 11: xmlParseEntityRef"),
            ("< in text", damaged(19, " a < b"), ":23:107 (byte 2165), record 21: StartTag"),
            (
                "a wrong end tag", document.replacingOccurrences(of: "</group>", with: "</grp>"),
                "record 41: Opening and ending tag mismatch"
            ),
            (
                "an unclosed ancestor", document.replacingOccurrences(of: "</events>\n", with: ""),
                ":44:9 (byte 4270), record 41"
            ),
            ("a truncated file", String(document.prefix(document.count * 2 / 3)), "record 27"),
            ("content after the root", document + "junk\n", ":46:1 (byte 4281), record 41: Extra content"),
        ]
        for (index, damage) in cases.enumerated() {
            let (skipping, full) = (store(), store())
            try FileManager.default.copyItem(atPath: target, toPath: skipping)
            try FileManager.default.copyItem(atPath: target, toPath: full)
            // Every other case in chunks of 7 bytes: start tags cut, held back.
            let input = (index % 2 == 1 ? ["--chunk-size", "7"] : []) + [file(damage.text)]
            let skipped = try run(skipping, input)
            let parsed = try run(full, ["--no-skip"] + input)
            #expect(skipped.status != 0 && skipped.status == parsed.status, "\(damage.name): \(skipped.stderr)")
            #expect(skipped.stderr == parsed.stderr, "\(damage.name):\n\(skipped.stderr)\n\(parsed.stderr)")
            #expect(skipped.stderr.contains(damage.expected), "\(damage.name): \(skipped.stderr)")
            #expect(rows(skipping) == rows(full), "\(damage.name)")
        }
    }

    /// A skipped element moves libxml2's line, column and byte count as its
    /// bytes would: damage right after one, on its last line, fails a run
    /// that skips as it fails a full run (message, line, column, byte,
    /// record), where the record is the document's root, where the elements
    /// span lines that end in `\r\n` with non-ASCII characters on their
    /// last, and in a document in ISO-8859-1 (libxml2 converts it: columns
    /// count its bytes, and the byte offset is the file's), whole or in
    /// chunks of 7 bytes.
    @Test func damageRightAfterASkippedElementFailsAsAFullRunFails() throws {
        let root = TestPaths.file(
            "xml-root-digests.yml",
            """
            entities:
              Event:
                records: /event
                key: id
                attributes: {id: integer, title: string}
            """)
        let rootRecord =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<event id=\"1\" title=\"\u{E9}t\u{E9}\">caf\u{E9}</event>"
        let spanning = (1...20).map {
            Self.event($0, title: "\u{E9}t\u{E9}\($0)").replacingOccurrences(of: " kind=", with: "\r\n kind=")
        }
        let latin = (1...20).map { Self.event($0, title: "\u{E9}t\u{E9}\($0)") }
        func damaged(_ events: [String]) -> String {
            var damaged = events
            damaged[9] += " & "
            return Self.document([("<group>", damaged)])
        }
        func latin1(_ text: String) throws -> String {
            let path = TestPaths.temporaryDirectory().appendingPathComponent("latin1.xml").path
            let declared = text.replacingOccurrences(of: "UTF-8", with: "ISO-8859-1")
            try declared.data(using: .isoLatin1)?.write(to: URL(fileURLWithPath: path))
            return path
        }
        let cases: [(name: String, mapping: String, day: String, damaged: String, expected: String)] = [
            (
                "the root", root, file(rootRecord), file(rootRecord + " junk\n"),
                ":2:40 (byte 81), record 2: Extra content"
            ),
            (
                "lines ending in CR LF", Self.mapping, file(Self.document([("<group>", spanning)])),
                file(damaged(spanning)), ":23:91 (byte 1133), record 11: xmlParseEntityRef"
            ),
            (
                "ISO-8859-1", Self.mapping, try latin1(Self.document([("<group>", latin)])), try latin1(damaged(latin)),
                ":13:105 (byte 1098), record 11: xmlParseEntityRef"
            ),
        ]
        for damage in cases {
            for chunks in [[], ["--chunk-size", "7"]] {
                let (skipping, full) = (store(), store())
                for target in [skipping, full] {
                    for _ in 0..<2 {
                        let result = try runCommand(
                            sluice,
                            ["import", "--mapping", damage.mapping, "--into", target, "--stats-json", target + ".json"]
                                + chunks + [damage.day])
                        #expect(result.status == 0, "\(damage.name): \(result.stderr)")
                    }
                }
                #expect(try unchangedRecords(skipping) > 0, "\(damage.name): the second run skips")
                let arguments = ["import", "--mapping", damage.mapping] + chunks
                let skipped = try runCommand(sluice, arguments + ["--into", skipping, damage.damaged])
                let parsed = try runCommand(sluice, arguments + ["--into", full, "--no-skip", damage.damaged])
                #expect(skipped.status != 0 && skipped.status == parsed.status, "\(damage.name): \(skipped.stderr)")
                #expect(skipped.stderr == parsed.stderr, "\(damage.name):\n\(skipped.stderr)\n\(parsed.stderr)")
                #expect(skipped.stderr.contains(damage.expected), "\(damage.name): \(skipped.stderr)")
            }
        }
    }

    /// The DOCTYPE is in every element's digest: declaring `title` NMTOKENS
    /// (libxml2 then collapses its spaces) parses every element again, and
    /// the store holds the values a full run gives.
    @Test func aChangedDoctypeParsesEveryElement() throws {
        let events = (1...20).map { Self.event($0, title: "  spaced   out \($0) ") }
        let plain = file(Self.document([("<group>", events)]))
        let typed = file(
            Self.document(
                [("<group>", events)], doctype: "<!DOCTYPE events [\n<!ATTLIST event title NMTOKENS #IMPLIED>\n]>\n"))
        #expect(try differential([[plain], [plain], [typed], [typed]]) == [0, 20, 0, 20])
    }

    /// The start tags of an element's ancestors are in its digest: a group
    /// whose namespace declaration changes has its elements parsed again,
    /// the other group's are not; a group that loses the declaration of a
    /// prefix its elements use fails as a full run fails.
    @Test func namespaceDeclarationsAreInTheDigestsOfTheElementsUnderThem() throws {
        let first = (1...10).map { Self.event($0).replacingOccurrences(of: "p:login", with: "q:login") }
        let second = (11...30).map { Self.event($0) }
        func day(_ declaration: String) -> String {
            file(Self.document([("<group \(declaration)>", first), ("<group>", second)]))
        }
        let unchanged = try differential([
            [day("xmlns:q=\"urn:a\"")], [day("xmlns:q=\"urn:a\"")], [day("xmlns:q=\"urn:b\"")],
        ])
        #expect(unchanged == [0, 30, 20])
        let target = store()
        #expect(try run(target, [day("xmlns:q=\"urn:a\"")]).status == 0)
        let undeclared = day("")
        let copy = store()
        try FileManager.default.copyItem(atPath: target, toPath: copy)
        let skipping = try run(target, [undeclared])
        let full = try run(copy, ["--no-skip", undeclared])
        #expect(skipping.status != 0 && skipping.status == full.status)
        #expect(skipping.stderr.contains("Namespace prefix q"), "\(skipping.stderr)")
        #expect(skipping.stderr == full.stderr, "\(skipping.stderr)\n\(full.stderr)")
    }

    /// A document in UTF-16 is not cut into units: every run parses it
    /// whole, says that it kept no digests, and stores what a full run does.
    @Test func aUTF16DocumentIsParsedWhole() throws {
        let text = Self.document([("<group>", (1...10).map { Self.event($0) })])
            .replacingOccurrences(of: "UTF-8", with: "UTF-16")
        var bytes = Data([0xFF, 0xFE])
        bytes.append(text.data(using: .utf16LittleEndian) ?? Data())
        let path = TestPaths.temporaryDirectory().appendingPathComponent("utf16.xml").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let (skipping, parsing) = (store(), store())
        for _ in 0..<2 {
            let result = try run(skipping, [path])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("record digests not kept (\(path): the XML document is in UTF-16"))
            #expect(try unchangedRecords(skipping) == 0)
            _ = try run(parsing, ["--no-skip", path])
            #expect(rows(skipping) == rows(parsing))
        }
        #expect(StoreReader(skipping).count("Event") == 10)
    }
}
