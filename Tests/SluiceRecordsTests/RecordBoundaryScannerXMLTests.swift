import Foundation
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// Random XML documents with what trips a boundary scanner: attribute values
/// holding `>` and `/`, comments, CDATA sections and processing instructions
/// holding tags, namespaces and `xml:space` on the root, a DOCTYPE whose
/// attribute types change values, self-closing and nested same-name elements.
struct XMLTextGenerator {
    var random: SplitMix
    /// Whether the DOCTYPE declares an entity (which the parser refuses).
    var declaresEntity = false

    private mutating func pick(_ choices: [String]) -> String { choices[random.int(0...(choices.count - 1))] }

    mutating func space() -> String { pick(["", " ", "\n", "\n  ", "\t", "\r\n"]) }

    mutating func attributes() -> String {
        var text = ""
        for index in 0..<random.int(0...3) {
            let value = pick(["1", "a>b", "x/y", "/>", "a/>b", "&amp;&lt;", "&#62;", " a  b ", "'", "東京", ""])
            let name = pick(["id", "k", "v", "p:x", "kind"]) + "\(index)"
            text +=
                random.chance(0.5)
                ? " \(name)=\"\(value)\"" : " \(name)='\(value.replacingOccurrences(of: "'", with: "&apos;"))'"
            text += pick(["", " ", "\n"])
        }
        return text
    }

    mutating func content(depth: Int) -> String {
        var text = ""
        for _ in 0..<random.int(0...3) {
            switch random.int(0...7) {
            case 0: text += pick(["text", "a &amp; b", "&#60;x&#62;", " ", "\n", "東京 😀", "]]&gt;"])
            case 1: text += "<!-- " + pick(["</node>", "<node>", "a - b", "'\""]) + " -->"
            case 2: text += "<![CDATA[" + pick(["</node>", "<x>", "]]", "] ]>", "&amp;"]) + "]]>"
            case 3: text += "<?pi " + pick(["</node>", "a?b", "? >"]) + "?>"
            default: text += element(depth: depth + 1)
            }
        }
        return text
    }

    mutating func element(depth: Int) -> String {
        let name = pick(depth >= 3 ? ["tag", "nd", "p:tag"] : ["node", "tag", "nd", "way", "p:node", "node"])
        if depth >= 4 || random.chance(0.3) { return "<\(name)\(attributes())\(space())/>" }
        return "<\(name)\(attributes())>" + content(depth: depth) + "</\(name)\(space())>"
    }

    mutating func document() -> String {
        var text = random.chance(0.5) ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""
        if random.chance(0.5) {
            text += "<!DOCTYPE osm [\n  <!ELEMENT node ANY>\n  <!-- a comment with > and ' -->\n"
            text += "  <!ATTLIST node kind0 NMTOKENS #IMPLIED>\n  <?pi ]> ?>\n  <!NOTATION n SYSTEM \"a]>\">\n"
            if declaresEntity { text += "  <!ENTITY e \"x\">\n" }
            text += "]>\n"
        }
        text += "<!-- before -->\n<osm xmlns=\"urn:x\" xmlns:p=\"urn:p\" xml:space=\"preserve\" xml:lang=\"en\""
        text += " version=\"0.6\">\n  <bounds minlat=\"1\"/>\n"
        for _ in 0..<random.int(1...6) {
            text += space() + element(depth: 1)
            if random.chance(0.2) { text += "<meta a=\"1\">" + element(depth: 2) + "</meta>" }
        }
        return text + "\n</osm>\n<!-- after -->\n"
    }
}

@Suite struct RecordBoundaryScannerXMLTests {
    /// Every unit parsed alone, with its context, gives the records the
    /// whole document gives, in order; no chunking changes the units.
    private func check(_ text: String, paths: [String], everySplit: Bool = false, seed: UInt64) throws {
        let bytes = Array(text.utf8)
        let routes = try boundaryRoutes(paths)
        let whole = try boundaryRecords(bytes, routes: routes, kind: .xml, multipleValues: false)
        let units = try scanUnits(bytes, paths: paths, kind: .xml, multipleValues: false, chunkSizes: [bytes.count])
        let alone = try unitRecords(units: units, routes: routes, kind: .xml, multipleValues: false)
        #expect(alone == whole, "seed \(seed) \(paths): \(text)")
        for unit in units {
            let (line, column) = lineAndColumn(bytes, unit.start.byteOffset)
            #expect(unit.start.line == line && unit.start.column == column, "seed \(seed): \(unit)")
        }
        var random = SplitMix(seed: seed)
        var chunkings: [[Int]] = [[1], [2, 3], [17, 5, 1, 40], (0..<20).map { _ in random.int(1...64) }]
        if everySplit { chunkings += (1..<bytes.count).map { [$0, bytes.count] } }
        for sizes in chunkings {
            let again = try scanUnits(bytes, paths: paths, kind: .xml, multipleValues: false, chunkSizes: sizes)
            #expect(again == units, "seed \(seed), chunks \(sizes.prefix(4))")
        }
    }

    @Test func unitsAreTheElementsOnThePaths() throws {
        var units = 0
        for seed in UInt64(1)...50 {
            var generator = XMLTextGenerator(random: SplitMix(seed: seed))
            let text = generator.document()
            units += try scanUnits(
                Array(text.utf8), paths: ["/osm/node"], kind: .xml, multipleValues: false, chunkSizes: [64]
            ).count
            try check(text, paths: ["/osm/node"], everySplit: seed <= 4, seed: seed)
            try check(text, paths: ["/osm/*"], seed: seed)
            try check(text, paths: ["/osm/node", "/osm/way/nd", "/osm/*/node"], seed: seed)
        }
        #expect(units > 50)
    }

    /// A DOCTYPE that declares an entity makes the parser refuse the
    /// document: each unit, carrying the DOCTYPE in its context, is refused
    /// too, instead of being read without it.
    @Test func theDoctypeIsPartOfEveryUnitsContext() throws {
        for seed in UInt64(100)...140 {
            var generator = XMLTextGenerator(random: SplitMix(seed: seed), declaresEntity: true)
            let text = generator.document()
            guard text.contains("<!ENTITY") else { continue }
            let bytes = Array(text.utf8)
            let routes = try boundaryRoutes(["/osm/*"])
            #expect(throws: ParseError.self) {
                try boundaryRecords(bytes, routes: routes, kind: .xml, multipleValues: false)
            }
            let units = try scanUnits(bytes, paths: ["/osm/*"], kind: .xml, multipleValues: false, chunkSizes: [9])
            #expect(!units.isEmpty)
            for unit in units {
                #expect(throws: ParseError.self, "seed \(seed)") {
                    try boundaryRecords(unit.alone, routes: routes, kind: .xml, multipleValues: false)
                }
            }
        }
    }

    @Test func unitsOfRealCorpora() throws {
        let cases = [
            ("osm/winthrop.osm", ["/osm/node", "/osm/way", "/osm/relation"]),
            ("osm/planet_10.068,48.135_10.071,48.137.osm", ["/osm/*"]),
            ("mediawiki/dump.xml", ["/mediawiki/page"]),
            ("stackexchange/beer/Posts.xml", ["/posts/row"]),
        ]
        for (file, paths) in cases {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: TestPaths.corpus(file))))
            let routes = try boundaryRoutes(paths)
            let whole = try boundaryRecords(bytes, routes: routes, kind: .xml, multipleValues: false)
            let units = try scanUnits(bytes, paths: paths, kind: .xml, multipleValues: false, chunkSizes: [65536])
            #expect(!whole.isEmpty && units.count == whole.count, "\(file)")
            let alone = try unitRecords(units: units, routes: routes, kind: .xml, multipleValues: false)
            #expect(alone == whole, "\(file)")
            let split = try scanUnits(bytes, paths: paths, kind: .xml, multipleValues: false, chunkSizes: [1, 13, 700])
            #expect(split == units, "\(file)")
        }
    }

    @Test func aStartTagCutByAChunkIsCarried() throws {
        let text = "<osm><node id=\"1\"/><node id=\"2\">x</node></osm>"
        let units = try scanUnits(
            Array(text.utf8), paths: ["/osm/node"], kind: .xml, multipleValues: false, chunkSizes: [7, 100])
        #expect(units.map(\.start.byteOffset) == [5, 19])
        #expect(units.map(\.end) == [19, 40])
        #expect(
            units.map { String(decoding: $0.alone, as: UTF8.self) } == [
                "<osm><node id=\"1\"/></osm>", "<osm><node id=\"2\">x</node></osm>",
            ])
    }

    @Test func utf16IsRefusedOnceItsFirstBytesShowIt() throws {
        let text = Array("<osm><node/></osm>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for bom in [[], [0xFF, 0xFE]] as [[UInt8]] {
            #expect(throws: BoundaryScanRefusal.self) {
                _ = try scanUnits(bom + text, paths: ["/osm/node"], kind: .xml, multipleValues: false, chunkSizes: [1])
            }
        }
    }

    @Test func anInputEndingInsideAnElementIsAnError() throws {
        for text in ["<osm><node id=\"1\">", "<osm><node/>", "<osm><!-- x", "<osm a=\"1"] {
            #expect(throws: ParseError.self, "\(text)") {
                _ = try scanUnits(
                    Array(text.utf8), paths: ["/osm/node"], kind: .xml, multipleValues: false, chunkSizes: [3])
            }
        }
    }

    /// Random bytes and mangled documents: the scanner ends, and its
    /// boundaries stay in order (each start is followed by its end).
    @Test func malformedInputNeverCrashesOrLoops() throws {
        var random = SplitMix(seed: 78)
        for round in 0..<300 {
            var generator = XMLTextGenerator(random: SplitMix(seed: UInt64(round)))
            var bytes = Array(generator.document().utf8)
            if round % 3 == 0 {
                bytes = (0..<random.int(0...300)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                for _ in 0..<random.int(1...6) where !bytes.isEmpty {
                    bytes[random.int(0...(bytes.count - 1))] =
                        [
                            UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "/"),
                            UInt8(ascii: "!"),
                            UInt8.random(in: 0...255, using: &random),
                        ][random.int(0...5)]
                }
            }
            do {
                _ = try scanUnits(
                    bytes, paths: ["/osm/node", "/*/*/tag"], kind: .xml, multipleValues: false,
                    chunkSizes: [random.int(1...40)])
            } catch is ParseError {
                continue
            } catch is BoundaryScanRefusal {
                continue
            }
        }
    }
}
