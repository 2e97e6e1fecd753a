@_spi(Machinery) import SluiceRecords
import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// OpenStreetMap objects with their scalar attributes (the full OSM example,
/// with tags and node lists, belongs to the mapping-language work).
let osmMapping = try! Mapping.parse(yaml: """
    entities:
      Node:
        records: [/osm/node, /osmChange/*/node]
        key: id
        attributes: {id: integer, lat: double, lon: double, version: integer, timestamp: date, user: string, uid: integer}
      Way:
        records: [/osm/way, /osmChange/*/way]
        key: id
        attributes: {id: integer, version: integer, timestamp: date, user: string}
      Relation:
        records: [/osm/relation, /osmChange/*/relation]
        key: id
        attributes: {id: integer, version: integer, timestamp: date}
    """)

/// Decompresses `path` with a command-line tool into a temporary file.
func decompressed(_ path: String, tool: String) throws -> String {
    let out = TestPaths.temporaryDirectory().appendingPathComponent("plain").path
    let result = try runCommand("/bin/sh", ["-c", "\(tool) -dc '\(path)' > '\(out)'"])
    #expect(result.status == 0)
    return out
}

/// Every table's rows, for comparing stores.
func dump(_ store: String, _ tables: [String]) -> [[[String?]]] {
    let reader = StoreReader(store)
    return tables.map { reader.rows("SELECT * FROM \($0) ORDER BY 1") }
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
        let report = try Checker.check(path: TestPaths.corpus("mediawiki/bgwiki-latest-pages-articles-shortened.xml.bz2"), format: .xml)
        #expect(report.bytes == 486_088)
    }
}


@Suite struct CompressedErrorTests {
    @Test func errorsInCompressedInputGiveDecompressedOffsets() throws {
        let plain = TestPaths.file("bad.jsonl", "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3,, }\n")
        let packed = plain + ".gz"
        #expect(try runCommand("/bin/sh", ["-c", "gzip -c '\(plain)' > '\(packed)'"]).status == 0)
        do {
            _ = try Checker.check(path: packed, format: .jsonl)
            Issue.record("malformed compressed input was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.hasPrefix("\(packed):3:"))
            #expect(text.contains("of the decompressed stream"))
        }
    }
}

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
        let mapping = try Mapping.parse(yaml: """
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
