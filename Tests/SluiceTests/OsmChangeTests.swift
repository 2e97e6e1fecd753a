import Foundation
import Sluice
import SluiceTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The last action on each object of osmChange files, read with
/// Foundation's XMLParser: an account of the files independent of sluice's
/// libxml2 reader and mapping.
final class OsmChangeActions: NSObject, XMLParserDelegate {
    struct Object: Equatable {
        var action = ""
        var version = ""
        var lat: String?
        var tags: [String: String] = [:]
        var nodes: [String] = []
    }

    /// By "type:id", in the order the files say them.
    private(set) var last: [String: Object] = [:]
    private var action = ""
    private var current: (key: String, object: Object)?

    func read(_ data: Data) {
        let parser = XMLParser(data: data)
        parser.delegate = self
        _ = parser.parse()
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch name {
        case "create", "modify", "delete": action = name
        case "node", "way", "relation":
            current = (
                "\(name):\(attributes["id"] ?? "")",
                Object(action: action, version: attributes["version"] ?? "", lat: attributes["lat"])
            )
        case "tag": current?.object.tags[attributes["k"] ?? ""] = attributes["v"] ?? ""
        case "nd": current?.object.nodes.append(attributes["ref"] ?? "")
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        guard ["node", "way", "relation"].contains(name), let current else { return }
        last[current.key] = current.object
        self.current = nil
    }
}

@Suite struct OsmChangeTests {
    /// Both .osc corpus files, applied in one run to a store that holds
    /// every object they touch (version 0, one tag, a node list or a
    /// member) and some they do not: each object ends as its last action
    /// says — deleted with its links, or replaced whole — and the others
    /// are left as they were. Before `delete-records`, the <delete> blocks
    /// were upserted like <modify> (node 65844 came in live).
    @Test func changeFilesApplyTheirLastActionPerObject() throws {
        let files = ["osm/000466354.osc.gz", "osm/008-ch.osc.gz"].map(TestPaths.corpus)
        let actions = OsmChangeActions()
        for file in files {
            actions.read(try runCommand("/bin/gzip", ["-dc", file]).stdout.data(using: .utf8) ?? Data())
        }
        let touched = actions.last
        #expect(touched.count > 2_000)
        #expect(touched.values.contains { $0.action == "delete" })
        #expect(touched["node:65844"]?.action == "delete")

        var base = "<osm version=\"0.6\">\n"
        for key in touched.keys.sorted() {
            let (type, id) = (String(key.split(separator: ":")[0]), String(key.split(separator: ":")[1]))
            switch type {
            case "node":
                base += "<node id=\"\(id)\" version=\"0\" lat=\"1\" lon=\"2\"><tag k=\"base\" v=\"yes\"/></node>\n"
            case "way":
                base +=
                    "<way id=\"\(id)\" version=\"0\"><nd ref=\"1\"/><nd ref=\"2\"/><tag k=\"base\" v=\"yes\"/></way>\n"
            default:
                base += "<relation id=\"\(id)\" version=\"0\"><member type=\"node\" ref=\"1\" role=\"r\"/></relation>\n"
            }
        }
        base +=
            "<node id=\"1\" version=\"0\" lat=\"1\" lon=\"2\"/><node id=\"2\" version=\"0\" lat=\"1\" lon=\"2\"/>\n</osm>\n"
        let store = TestPaths.temporaryDirectory().appendingPathComponent("osc.sqlite").path
        _ = try Importer(mapping: example("osm"), store: store).runBlocking(inputs: [TestPaths.file("base.osm", base)])
        let report = try Importer(mapping: example("osmchange"), store: store).runBlocking(inputs: files)

        let reader = StoreReader(store)
        let deletions = touched.filter { $0.value.action == "delete" }
        #expect(report.entities.map(\.counts.deleted).reduce(0, +) == deletions.count)
        for (key, object) in touched {
            let (type, id) = (String(key.split(separator: ":")[0]), String(key.split(separator: ":")[1]))
            let table = type.prefix(1).uppercased() + type.dropFirst()
            let row = reader.rows("SELECT version, tags\(type == "node" ? ", lat" : "") FROM \(table) WHERE id = \(id)")
            if object.action == "delete" {
                #expect(row.isEmpty, "\(key) is still stored")
                if type == "way" {
                    #expect(reader.value("SELECT count(*) FROM Way_nodes WHERE Way_id = \(id)") == "0", "\(key)")
                }
                if type == "relation" {
                    #expect(
                        reader.value("SELECT count(*) FROM Relation_members WHERE Relation_id = \(id)") == "0", "\(key)"
                    )
                }
                continue
            }
            guard let stored = row.first else {
                Issue.record("\(key) is missing")
                continue
            }
            #expect(stored[0] == object.version, "\(key)")
            let tags =
                (stored[1]?.data(using: .utf8)).flatMap {
                    try? JSONSerialization.jsonObject(with: $0) as? [String: String]
                } ?? [:]
            #expect(tags == object.tags, "\(key): tags \(stored[1] ?? "NULL")")
            if type == "node", let lat = object.lat { #expect(Double(stored[2] ?? "") == Double(lat), "\(key)") }
            if type == "way" {
                let nodes = reader.rows("SELECT Node_id FROM Way_nodes WHERE Way_id = \(id) ORDER BY position").map {
                    $0[0] ?? ""
                }
                #expect(nodes == object.nodes, "\(key)")
            }
        }
        #expect(reader.rows("SELECT version FROM Node WHERE id IN (1, 2)") == [["0"], ["0"]])
        #expect(
            reader.count("Node") + reader.count("Way") + reader.count("Relation") == touched.count - deletions.count + 2
        )
    }
}
