import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Decompresses `path` with a command-line tool into a temporary file.
func decompressed(_ path: String, tool: String) throws -> String {
    let out = TestPaths.temporaryDirectory().appendingPathComponent("plain").path
    let result = try runCommand("/bin/sh", ["-c", "\(tool) -dc '\(path)' > '\(out)'"])
    #expect(result.status == 0)
    return out
}

@Suite(.serialized) struct CompressedCorporaTests {
    @Test(arguments: [
        ("osm/liechtenstein-2013-08-03.osm.bz2", "bzip2", 65_733),
        ("osm/000466354.osc.gz", "gzip", 866),
        ("osm/008-ch.osc.gz", "gzip", 17_949),
    ])
    func compressedOSMImportsLikeItsPlainBytes(file: String, tool: String, nodes: Int) throws {
        let path = TestPaths.corpus(file)
        let plain = try decompressed(path, tool: tool)
        var stores: [String] = []
        for (input, chunk) in [(path, 65_536), (plain, 65_536), (path, 1_000)] {
            var options = ImportOptions()
            options.chunkSize = chunk
            options.format = .xml
            let store = TestPaths.temporaryDirectory().appendingPathComponent("osm.sqlite").path
            let report = try Importer(mapping: osmMapping, store: store, options: options).runBlocking(inputs: [input])
            #expect(report[entity: "Node"]?.inserted == nodes)
            stores.append(store)
        }
        let tables = ["Node", "Way", "Relation"]
        #expect(dump(stores[0], tables) == dump(stores[1], tables))
        #expect(dump(stores[2], tables) == dump(stores[1], tables))
    }

    @Test func tinyBzip2FileByteByByte() throws {
        var options = ImportOptions()
        options.chunkSize = 1
        let store = TestPaths.temporaryDirectory().appendingPathComponent("wo.sqlite").path
        let report = try Importer(mapping: osmMapping, store: store, options: options)
            .runBlocking(inputs: [TestPaths.corpus("osm/West-Oakland.osm.bz2")])
        #expect(report[entity: "Node"]?.inserted == 446)
        #expect(report[entity: "Way"]?.inserted == 66)
        #expect(report[entity: "Relation"]?.inserted == 23)
    }

    @Test func truncatedAtAHundredRandomOffsetsIsAlwaysAnError() throws {
        for file in ["osm/000466354.osc.gz", "osm/West-Oakland.osm.bz2", "json/overpass-response-3.json.gz"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.corpus(file)))
            var generator = SplitMix(seed: UInt64(data.count))
            let directory = TestPaths.temporaryDirectory()
            for attempt in 0..<100 {
                let cut = Int(generator.next() % UInt64(data.count - 1))
                let path = directory.appendingPathComponent("cut\(attempt)").path
                _ = FileManager.default.createFile(atPath: path, contents: data.prefix(cut))
                #expect(throws: ImportError.self, "\(file) cut at \(cut)") {
                    try Checker.check(path: path, format: file.contains(".json") ? .json : .xml)
                }
            }
        }
    }

    @Test func bulgarianUTF16WikipediaParses() throws {
        let report = try Checker.check(
            path: TestPaths.corpus("mediawiki/bgwiki-latest-pages-articles-shortened.xml.bz2"), format: .xml)
        #expect(report.bytes == 486_088)
    }
}
