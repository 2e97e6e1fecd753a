import Foundation
import Sluice
import SluiceTestSupport
import Testing

let stackExchange = ["Posts", "Users", "Comments", "Votes", "Badges", "Tags", "PostLinks", "PostHistory"]

func example(_ name: String) throws -> Mapping {
    try Mapping.load(path: TestPaths.repository.appendingPathComponent("Examples/\(name)/mapping.yml").path)
}

func stackExchangeFiles(in folder: String = TestPaths.corpus("stackexchange/french.meta")) -> [String] {
    stackExchange.map { "\(folder)/\($0).xml" }
}

/// Decompresses the GH Archive hour into a temporary JSON Lines file.
func gharchiveLines() throws -> String {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("hour.jsonl").path
    let result = try runCommand(
        "/bin/sh", ["-c", "gzip -dc '\(TestPaths.corpus("json/2015-01-01-12.json.gz"))' > '\(path)'"])
    #expect(result.status == 0)
    return path
}

/// OpenStreetMap objects with their scalar attributes (the full OSM example,
/// with tags and node lists, belongs to the mapping-language work).
let osmMapping = try! Mapping.parse(
    yaml: """
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

/// Imports corpus files with an example mapping into a new store.
func importExample(_ name: String, _ files: [String], format: InputFormat? = nil) throws -> (ImportReport, StoreReader)
{
    var options = ImportOptions()
    options.format = format
    let store = TestPaths.temporaryDirectory().appendingPathComponent("\(name).sqlite").path
    let report = try Importer(mapping: example(name), store: store, options: options)
        .runBlocking(inputs: files.map(TestPaths.corpus))
    return (report, StoreReader(store))
}
