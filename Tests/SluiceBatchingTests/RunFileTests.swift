import Foundation
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching

/// The sort runs' file format: rows in compressed blocks, read back
/// through a bounded buffer.
@Suite struct RunFileTests {
    /// `count` rows of an integer and a text of `width(index)` bytes.
    func rows(_ count: Int, width: (Int) -> Int) -> RowArena {
        var rows = RowArena(columnCount: 2)
        for index in 0..<count {
            rows.beginRow(ordinal: index + 1)
            rows.set(0, .integer(Int64(index)))
            rows.set(1, rows.text(Array(String(repeating: "\(index % 10)", count: width(index)).utf8)))
        }
        return rows
    }

    /// Row `row` of `rows` as its ordinal, integer and text.
    func describe(_ rows: RowArena, _ row: Int) -> String {
        guard case .integer(let id) = rows[row, 0], case .text = rows[row, 1] else { return "?" }
        return "\(rows.ordinals[row]) \(id) " + rows.withText(rows[row, 1]) { String(decoding: $0, as: UTF8.self) }
    }

    /// Every row of a reader, as ``describe(_:_:)`` gives it.
    func contents(_ reader: RunReader) throws -> [String] {
        var seen: [String] = []
        while try reader.next() { seen.append(describe(reader.current, 0)) }
        return seen
    }

    /// Rows from empty to four times the read buffer and the block, in
    /// several runs, read back in order with their bytes, whatever the
    /// buffer cuts.
    @Test func rowsOfEverySizeReadBackThroughASmallBuffer() throws {
        let codec = try #require(RunCodec())
        let file = try RunFile(directory: TestPaths.temporaryDirectory().path, codec: codec)
        let widths = [0, 1, 7, 4_095, 4_096, 16_384, 3, 70_000, 12, 5_000]
        let arenas = [rows(10, width: { widths[$0] }), rows(300, width: { $0 % 97 }), rows(1, width: { _ in 20_000 })]
        for arena in arenas {
            for row in 0..<arena.rowCount { try file.append(row: row, of: arena, ordinal: arena.ordinals[row]) }
            try file.endRun()
        }
        try file.endRun()
        file.endWriting()
        #expect(file.runs.count == 3, "an empty run is not kept")
        for (index, arena) in arenas.enumerated() {
            let expected = (0..<arena.rowCount).map { describe(arena, $0) }
            for bufferBytes in [4_096, RunCodec.blockBytes / 2, 64 << 10] {
                let reader = file.reader(index, columnCount: 2, bufferBytes: bufferBytes, codec: codec)
                #expect(try contents(reader) == expected, "run \(index), buffer \(bufferBytes)")
            }
        }
    }

    /// A run cut inside a block, and bytes that are no zstd frame (zstd's
    /// own words, "Src size is incorrect"), are errors naming the run file
    /// and the byte, never rows read short.
    @Test func aCutOrMalformedRunIsAnError() throws {
        let codec = try #require(RunCodec())
        let arena = rows(3, width: { 100 * ($0 + 1) })
        var bytes: [UInt8] = []
        for row in 0..<arena.rowCount {
            var block: [UInt8] = []
            RowCoding.append(row: row, of: arena, ordinal: row + 1, to: &block)
            #expect(codec.compress(block, into: &bytes) == nil)
        }
        let path = TestPaths.temporaryDirectory().appendingPathComponent("run").path
        for (name, content, range, message) in [
            ("cut", bytes, 0..<Int64(bytes.count - 20), "a cut block"),
            ("malformed", bytes + [5, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], 0..<Int64(bytes.count + 7), "incorrect"),
        ] {
            FileManager.default.createFile(atPath: path, contents: Data(content))
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            let reader = RunReader(
                descriptor: descriptor, path: path, range: range, columnCount: 2, bufferBytes: 4_096, codec: codec,
                spill: nil)
            #expect(try reader.next() && reader.next(), "\(name): the first two rows read")
            let error = #expect(throws: SpillError.self, "\(name)") { _ = try reader.next() && reader.next() }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("reading a sort run") && text.contains(path) && text.contains("at byte"), "\(text)")
            #expect(text.contains(message), "\(text)")
        }
    }
}
