import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite(.serialized) struct EveryFormatEveryChunkSizeTests {
    /// winthrop.osm recompressed with each tool, imported with chunks of 1, 7
    /// and 64 KiB bytes, equals the plain file's import.
    @Test(arguments: ["gzip", "bzip2", "zstd", "xz"])
    func realOSMThroughEveryFormat(tool: String) throws {
        let plain = TestPaths.corpus("osm/winthrop.osm")
        let packed = TestPaths.temporaryDirectory().appendingPathComponent("winthrop.osm.\(tool)").path
        #expect(try runCommand("/bin/sh", ["-c", "\(tool) -c '\(plain)' > '\(packed)'"]).status == 0)
        let tables = ["Node", "Way", "Relation"]
        var reference: [[[String?]]]?
        for (input, chunk) in [(plain, 65_536), (packed, 1), (packed, 7), (packed, 65_536)] {
            var options = ImportOptions()
            options.chunkSize = chunk
            options.format = .xml
            let store = TestPaths.temporaryDirectory().appendingPathComponent("w.sqlite").path
            let report = try Importer(mapping: osmMapping, store: store, options: options).runBlocking(inputs: [input])
            #expect(report[entity: "Node"]?.inserted == 1_525)
            let rows = dump(store, tables)
            if let reference { #expect(rows == reference, "\(tool), chunk \(chunk)") } else { reference = rows }
        }
    }

    @Test func gzippedOverpassJSONByteByByte() throws {
        let path = TestPaths.corpus("json/overpass-response-3.json.gz")
        let mapping = try Mapping.parse(
            yaml: """
                entities:
                  Element:
                    records: $.elements[*]
                    key: id
                    attributes: {id: integer, type: string, lat: double, lon: double, nodes: json, tags: json}
                """)
        var dumps: [[[String?]]] = []
        for chunk in [1, 65_536] {
            var options = ImportOptions()
            options.chunkSize = chunk
            options.format = .json
            let store = TestPaths.temporaryDirectory().appendingPathComponent("o.sqlite").path
            let report = try Importer(mapping: mapping, store: store, options: options).runBlocking(inputs: [path])
            #expect(report[entity: "Element"]?.inserted == 1_941 + 534)
            dumps.append(StoreReader(store).rows("SELECT * FROM Element ORDER BY id"))
        }
        #expect(dumps[0] == dumps[1])
    }
}
