import Foundation
import SluiceTestSupport
import Testing

@Suite struct LongStringMemoryTests {
    /// yajl hands a string over only whole, from its own buffer: a record
    /// with a 24 MiB string held 24 MiB or more in the parser (the issue's
    /// six 45 MiB records: 75 MB into `null:`, 45 above a tiny import), the
    /// rest of the run carrying the value by reference. The parser now
    /// reads a long string that a chunk ends inside itself and hands it to
    /// the record in pieces: the run peaks within a few MiB of a tiny
    /// import. The values, escapes and multi-byte characters cut by chunks
    /// included, reach SQLite byte for byte.
    @Test func aLongJSONStringIsNotHeldWholeByTheParser() throws {
        let directory = TestPaths.temporaryDirectory()
        func peak(_ name: String, _ lines: [String]) throws -> Int {
            let input = directory.appendingPathComponent(name).path
            try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
            let (status, peakKiB) = try runMeasured(
                sluice,
                [
                    "import", "--into", "null:", "--entity", "E", "--key", "id", "--format", "jsonl",
                    "--max-field-bytes", "\(32 << 20)", "-",
                ],
                inputPath: input)
            #expect(status == 0)
            return peakKiB
        }
        let tiny = try peak("tiny.jsonl", [#"{"id": 1, "a": "x"}"#])
        let long = String(repeating: "x", count: 24 << 20)
        let large = try peak("large.jsonl", (0..<2).map { #"{"id": \#($0), "a": "\#($0)\#(long)"}"# })
        print("long strings: a tiny import peaks at \(tiny) KiB, two records of a 24 MiB string at \(large) KiB")
        #expect(large < tiny + 12 << 10, "tiny import \(tiny) KiB, 24 MiB strings \(large) KiB")

        // Escapes, surrogate pairs and multi-byte characters in 1 MiB values
        // (read in 64 KiB chunks: cut everywhere) into SQLite.
        let unit = #"é€😀 \n\"\\\/\b\f\r\t\u00e9\u20AC\uD83D\uDE00 end "#
        let decodedUnit = "é€😀 \n\"\\/\u{8}\u{C}\r\té€😀 end "
        let count = (1 << 20) / unit.utf8.count
        let input = directory.appendingPathComponent("escaped.jsonl").path
        let lines = (0..<3).map { #"{"id": \#($0), "a": "\#($0)\#(String(repeating: unit, count: count))"}"# }
        try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let store = directory.appendingPathComponent("escaped.sqlite").path
        let result = try runCommand(sluice, ["import", "--into", store, "--entity", "E", "--key", "id", input])
        #expect(result.status == 0, "\(result.stderr)")
        let reader = StoreReader(store)
        for id in 0..<3 {
            let value = reader.value("SELECT a FROM E WHERE id = \(id)")
            #expect(value == "\(id)" + String(repeating: decodedUnit, count: count), "record \(id)")
        }
        #expect(reader.value("SELECT count(*) FROM E WHERE typeof(a) = 'text'") == "3")
    }
}
