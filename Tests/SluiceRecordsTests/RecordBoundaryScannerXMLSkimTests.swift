import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// The XML scanner's skim (the bytes inside a unit read 64 at a time)
/// against its plain path, boundary for boundary: every start and end with
/// its offsets, line, column and context, what each chunk leaves undecided,
/// the end of the input or its error, on well-formed and malformed input,
/// with each byte that matters at every place of a block and at every chunk
/// end.
@Suite struct RecordBoundaryScannerXMLSkimTests {
    /// All the scanner says of `bytes` cut into pieces of `chunkSizes`
    /// (cycled), as text that two scans can compare.
    private func transcript(_ bytes: [UInt8], paths: [String], chunkSizes: [Int], skims: Bool) throws -> [String] {
        var scanner = try RecordBoundaryScanner(
            paths: paths.map { try RecordPath.parse($0).get() }, kind: .xml, multipleValues: false, name: "t",
            skims: skims)
        var said: [String] = []
        var start = 0
        var turn = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunkSizes[turn % chunkSizes.count])
            turn += 1
            bytes[start..<end].withUnsafeBytes { chunk in
                scanner.scan(chunk) { boundary, context in
                    said.append("\(boundary) \(context.open) \(context.close) \(context.carried)")
                }
            }
            said.append("chunk \(end): undecided \(scanner.undecided)")
            start = end
        }
        do {
            let last = try scanner.finish()
            said.append("finish \(String(describing: last))")
        } catch {
            said.append("finish: \(error)")
        }
        said.append("refusal \(String(describing: scanner.refusal))")
        return said
    }

    private func expectSame(
        _ bytes: [UInt8], paths: [String], chunkSizes: [Int], _ comment: @autoclosure () -> String
    ) throws {
        let plain = try transcript(bytes, paths: paths, chunkSizes: chunkSizes, skims: false)
        let skimmed = try transcript(bytes, paths: paths, chunkSizes: chunkSizes, skims: true)
        #expect(skimmed == plain, "\(comment()), chunks \(chunkSizes.prefix(4))")
    }

    /// A unit holding every turn the skim takes (a `<` followed by `/`,
    /// `!`, `?` or a name, or by a quote, which is the name's first byte;
    /// quotes of both kinds holding the other, `<`, `>` and `/`; `/>` after
    /// a quote and after a name; `>` and quotes in text), moved by 0 to 70 bytes so that each of its bytes takes every
    /// place in a 64-byte block, and cut into chunks of sizes from 1 to
    /// 135 (a chunk of 64 bytes or more is skimmed) and at every byte: the
    /// skim says what the plain path says.
    @Test func everyByteAtEveryPlaceOfABlockAndAChunkEnd() throws {
        let unit =
            "<e a=\"x/>'<\" b='q\"<>/'><t/><u k=\"v\"/>text \"q\" 'q' > / <![CDATA[<x>]]><!-- <y/> -->"
            + "<?p <z/>?><u\nk='/'\n/><v>\"</v><w x=\"1\" y='2'>z</w><'x' y='/></e>"
        for shift in 0...70 {
            let text = "<r>" + String(repeating: " ", count: shift) + unit + "\n" + unit + "<e/></r>"
            let bytes = Array(text.utf8)
            let units = try scanUnits(bytes, paths: ["/r/e"], kind: .xml, multipleValues: false, chunkSizes: [7])
            #expect(units.count == 3, "shift \(shift)")
            for size in [1, 3, 7, 13, 64, 65, 66, 70, 79, 100, 127, 128, 135] {
                try expectSame(bytes, paths: ["/r/e"], chunkSizes: [size], "shift \(shift)")
            }
            for cut in 1..<bytes.count where shift % 10 == 0 {
                try expectSame(bytes, paths: ["/r/e"], chunkSizes: [cut, bytes.count], "shift \(shift)")
            }
        }
    }

    /// Generated documents, and the same with bytes that matter put in at
    /// random or replaced by random bytes, on several sets of paths.
    @Test func generatedAndMangledDocuments() throws {
        var random = SplitMix(seed: 2511)
        let marks: [UInt8] = Array("<>\"'/!?-[]".utf8)
        for round in 0..<120 {
            var generator = XMLTextGenerator(random: SplitMix(seed: UInt64(round)))
            var bytes = Array(generator.document().utf8)
            if round % 2 == 1 {
                for _ in 0..<random.int(1...6) {
                    let place = random.int(0...(bytes.count - 1))
                    bytes[place] =
                        random.chance(0.8)
                        ? marks[random.int(0...(marks.count - 1))] : UInt8.random(in: 0...255, using: &random)
                }
            }
            let sizes = [[bytes.count], [random.int(1...20)], (0..<8).map { _ in random.int(1...150) }]
            for paths in [["/osm/node"], ["/osm/*"], ["/osm/node", "/*/*/tag"]] {
                for chunkSizes in sizes {
                    try expectSame(bytes, paths: paths, chunkSizes: chunkSizes, "round \(round) \(paths)")
                }
            }
        }
    }
}
