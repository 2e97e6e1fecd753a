import Foundation
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// Random JSON text with what trips a boundary scanner: strings holding
/// brackets, quotes, escapes and UTF-8, values over several lines.
struct JSONTextGenerator {
    var random: SplitMix

    private static let pieces = [
        "plain", "{", "}", "[", "]", "\\\"", "\\\\", "\\n", "\\/", "\\u00e9", "\\ud83d\\ude00", "é", "東京", "😀",
        " ", ",", ":", "\\\\\\\"", "\\t", "a\\\\",
    ]
    private static let keys = ["key", "a", "id", "k]\\\"{", "k\\u0065y", "other", "東"]

    mutating func space() -> String {
        ["", " ", "\n", "\t", "\r\n", "  \n  ", ""][random.int(0...6)]
    }

    mutating func string() -> String {
        var text = "\""
        for _ in 0..<random.int(0...5) { text += Self.pieces[random.int(0...(Self.pieces.count - 1))] }
        return text + "\""
    }

    mutating func scalar() -> String {
        switch random.int(0...5) {
        case 0: return "-12.5e3"
        case 1: return String(random.int(0...100_000))
        case 2: return "true"
        case 3: return "false"
        case 4: return "null"
        default: return string()
        }
    }

    mutating func value(depth: Int) -> String {
        let choice = depth >= 4 ? 2 : random.int(0...2)
        switch choice {
        case 0:
            var members: [String] = []
            for _ in 0..<random.int(0...4) {
                let key = "\"" + Self.keys[random.int(0...(Self.keys.count - 1))] + "\""
                members.append(space() + key + space() + ":" + space() + value(depth: depth + 1) + space())
            }
            return "{" + members.joined(separator: ",") + space() + "}"
        case 1:
            var elements: [String] = []
            for _ in 0..<random.int(0...4) { elements.append(space() + value(depth: depth + 1) + space()) }
            return "[" + elements.joined(separator: ",") + space() + "]"
        default:
            return scalar()
        }
    }

    /// Values one after another, as JSON Lines (mostly objects).
    mutating func lines(_ count: Int) -> String {
        var text = random.chance(0.2) ? "\u{FEFF}" : ""
        for _ in 0..<count {
            text += random.chance(0.8) ? value(depth: 0) : scalar()
            text += [" ", "\n", "\n\n", "\r\n", " \n\t"][random.int(0...4)]
        }
        return text
    }

    /// An array of `count` values.
    mutating func array(_ count: Int) -> String {
        (0..<count).map { _ in space() + value(depth: 1) + space() }.joined(separator: ",").wrapped("[", "]")
    }

    /// An object whose `key` (also spelled with an escape) holds arrays of
    /// values, beside members that look alike at other depths.
    mutating func keyedDocument(_ count: Int) -> String {
        var members = ["\"x\":" + value(depth: 2), "\"key\":" + array(count)]
        members.append("\"other\":{\"key\":" + array(2) + "}")
        members.append("\"k\\u0065y\":" + array(count / 2))
        members.append("\"key\":{\"id\":1}")
        members.append("\"nested\":[" + "{\"key\":[1,2]}" + "]")
        members.shuffle(using: &random)
        return "{" + members.joined(separator: "," + space()) + "}"
    }
}

extension String {
    fileprivate func wrapped(_ open: String, _ close: String) -> String { open + self + close }
}

@Suite struct RecordBoundaryScannerJSONTests {
    /// Every unit parsed alone, with its context, gives the records the
    /// whole document gives, in order; no chunking changes the units.
    private func check(
        _ text: String, paths: [String], multipleValues: Bool, everySplit: Bool = false, seed: UInt64
    ) throws {
        let bytes = Array(text.utf8)
        let routes = try boundaryRoutes(paths)
        let whole = try boundaryRecords(bytes, routes: routes, kind: .json, multipleValues: multipleValues)
        let units = try scanUnits(
            bytes, paths: paths, kind: .json, multipleValues: multipleValues, chunkSizes: [bytes.count])
        #expect(!units.isEmpty, "seed \(seed)")
        let alone = try unitRecords(units: units, routes: routes, kind: .json, multipleValues: multipleValues)
        #expect(alone == whole, "seed \(seed): \(text)")
        let skip = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        for unit in units {
            let (line, column) = lineAndColumn(bytes, unit.start.byteOffset, lineStartsAfter: skip)
            #expect(unit.start.line == line && unit.start.column == column, "seed \(seed): \(unit)")
        }
        var random = SplitMix(seed: seed)
        var chunkings: [[Int]] = [[1], [16], [17, 3, 1, 40], (0..<20).map { _ in random.int(1...64) }]
        if everySplit { chunkings += (1..<bytes.count).map { [$0, bytes.count] } }
        for sizes in chunkings {
            let again = try scanUnits(
                bytes, paths: paths, kind: .json, multipleValues: multipleValues, chunkSizes: sizes)
            #expect(again == units, "seed \(seed), chunks \(sizes.prefix(4))")
        }
    }

    @Test func jsonLinesUnitsAreTheTopLevelValues() throws {
        for seed in UInt64(1)...60 {
            var generator = JSONTextGenerator(random: SplitMix(seed: seed))
            let text = generator.lines(Int(seed % 7) + 1)
            try check(text, paths: ["$"], multipleValues: true, everySplit: seed <= 8, seed: seed)
            try check(text, paths: ["$[*]", "$.key[*]"], multipleValues: true, seed: seed)
        }
    }

    @Test func arrayUnitsAreItsElements() throws {
        for seed in UInt64(100)...160 {
            var generator = JSONTextGenerator(random: SplitMix(seed: seed))
            let text = generator.space() + generator.array(Int(seed % 6) + 1) + generator.space()
            try check(text, paths: ["$[*]"], multipleValues: false, everySplit: seed <= 104, seed: seed)
        }
    }

    @Test func keyedArrayUnitsAreTheElementsOnThePath() throws {
        for seed in UInt64(200)...260 {
            var generator = JSONTextGenerator(random: SplitMix(seed: seed))
            let text = generator.keyedDocument(Int(seed % 5) + 1)
            try check(text, paths: ["$.key[*]"], multipleValues: false, everySplit: seed <= 203, seed: seed)
            try check(text, paths: ["$.key[*]", "$.x", "$.other.key[*]"], multipleValues: false, seed: seed)
        }
    }

    @Test func unitsOfRealCorpora() throws {
        for (file, path) in [("apache_builds.json", "$.jobs[*]"), ("github_events.json", "$[*]")] {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: TestPaths.corpus("json/\(file)"))))
            let routes = try boundaryRoutes([path])
            let whole = try boundaryRecords(bytes, routes: routes, kind: .json, multipleValues: false)
            let units = try scanUnits(bytes, paths: [path], kind: .json, multipleValues: false, chunkSizes: [4096])
            #expect(whole.count > 5 && units.count == whole.count, "\(file)")
            let alone = try unitRecords(units: units, routes: routes, kind: .json, multipleValues: false)
            #expect(alone == whole, "\(file)")
            let split = try scanUnits(
                bytes, paths: [path], kind: .json, multipleValues: false, chunkSizes: [1, 13, 700])
            #expect(split == units, "\(file)")
        }
    }

    @Test func aNumberAtTheEndOfTheInputEndsThere() throws {
        let units = try scanUnits(
            Array("{\"a\":1}\n  42".utf8), paths: ["$"], kind: .json, multipleValues: true, chunkSizes: [3])
        #expect(units.map(\.start.byteOffset) == [0, 10])
        #expect(units.map(\.end) == [7, 12])
        #expect(units[1].start.line == 2 && units[1].start.column == 3)
    }

    @Test func anInputEndingInsideAStructureIsAnError() throws {
        for (text, multiple) in [("{\"a\":[1", true), ("\"abc", true), ("{\"key\":[1,", false), ("{\"ke", false)] {
            #expect(throws: ParseError.self, "\(text)") {
                _ = try scanUnits(
                    Array(text.utf8), paths: multiple ? ["$"] : ["$.key[*]"], kind: .json, multipleValues: multiple,
                    chunkSizes: [2])
            }
        }
    }

    @Test func shapesItDoesNotHandleAreRefusedWithAReason() throws {
        #expect(throws: BoundaryScanRefusal.self) {
            _ = try RecordBoundaryScanner(paths: [], kind: .json, multipleValues: true, name: "t")
        }
        #expect(throws: BoundaryScanRefusal.self) {
            _ = try RecordBoundaryScanner(
                paths: [try RecordPath.parse("/a/b").get()], kind: .json, multipleValues: false, name: "t")
        }
    }

    /// Random bytes and mangled documents: the scanner ends, and its
    /// boundaries stay in order (each start is followed by its end).
    @Test func malformedInputNeverCrashesOrLoops() throws {
        var random = SplitMix(seed: 77)
        for round in 0..<300 {
            var generator = JSONTextGenerator(random: SplitMix(seed: UInt64(round)))
            var bytes = Array(generator.lines(3).utf8)
            if round % 3 == 0 {
                bytes = (0..<random.int(0...300)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                for _ in 0..<random.int(1...6) where !bytes.isEmpty {
                    bytes[random.int(0...(bytes.count - 1))] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let paths = round % 2 == 0 ? ["$"] : ["$.key[*]", "$[*]"]
            do {
                _ = try scanUnits(
                    bytes, paths: paths, kind: .json, multipleValues: round % 2 == 0,
                    chunkSizes: [random.int(1...40)])
            } catch is ParseError {
                continue
            }
        }
    }
}
