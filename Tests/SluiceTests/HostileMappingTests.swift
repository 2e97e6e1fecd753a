import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Mappings written to break the store: names SQL must quote, names that
/// collide once SQLite folds case, YAML that expands or nests without end.
/// Each must import correctly or be refused before any input is read —
/// never run SQL it did not mean, never leave the store half-made.
@Suite struct HostileMappingTests {
    static let names = [
        #"a"b"#, "it's", #"x"; DROP TABLE x; --"#, "select", "from", "order", "group", "Ünïcødé", "日本語", "emoji 😀",
        "with space", "tab\tname", "[bracket]", "`tick`", "a.b", "%_like_",
    ]

    @Test(arguments: names) func quotedNamesRoundTrip(name: String) throws {
        let store = newStore()
        let json = try JSONSerialization.data(withJSONObject: ["id": 1, name: "v"])
        func quoted(_ text: String) -> String {
            "\""
                + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\t", with: "\\t") + "\""
        }
        let yaml = """
            entities:
              \(quoted(name)):
                records: $
                key: id
                attributes:
                  id: integer
                  \(quoted(name)): {type: string, source: \(quoted(name))}
                relationships:
                  \(quoted(name + "s")): {entity: Other, source: "list[*]", many: true}
              Other: {key: k, attributes: {k: integer}}
            """
        let mapping: Mapping
        do {
            mapping = try Mapping.parse(yaml: yaml)
        } catch {
            // A name the path syntax cannot hold is refused with the mapping.
            #expect(
                name.contains(".") || name.contains("[") || name.contains("\t") || name.contains("%"),
                "\(name): \(error)")
            return
        }
        let importer: Importer
        do { importer = try Importer(mapping: mapping, store: store) } catch {
            #expect(name.contains(".") || name.contains("[") || name.contains("%"), "\(name): \(error)")
            return
        }
        let input = TestPaths.file("in.jsonl", String(decoding: json, as: UTF8.self) + "\n")
        let report = try importer.runBlocking(inputs: [input])
        #expect(report.records == 1)
        let reader = StoreReader(store)
        let quotedName = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        // Dots and brackets are path syntax in a source: such a name reads a nested field, absent here.
        let readsMember = !name.contains(".") && !name.contains("[")
        #expect(reader.rows("SELECT \(quotedName) FROM \(quotedName)") == [[readsMember ? "v" : nil]], "\(name)")
        #expect(reader.value("SELECT count(*) FROM sqlite_schema WHERE name = 'x'") == "0")
        #expect(reader.value("PRAGMA integrity_check") == "ok")
    }

    @Test(arguments: ["_sluice_runs", "_Sluice_Checkpoints", "SQLITE_master", "sqlite_sequence"])
    func reservedNamesInAnyCaseAreRefused(name: String) {
        #expect(throws: MappingError.self) {
            _ = try CompiledMapping(
                Mapping.parse(yaml: "entities: {\(name): {records: $, key: id, attributes: {id: integer}}}"))
        }
    }

    @Test func namesCollidingWithoutCaseAreRefused() {
        for yaml in [
            "entities: {E: {records: $, key: id, attributes: {id: integer}}, e: {records: $, key: id, attributes: {id: integer}}}",
            "entities: {E: {records: $, key: id, attributes: {id: integer, Name: string, NAME: string}}}",
        ] {
            #expect(throws: MappingError.self, "\(yaml)") { _ = try CompiledMapping(Mapping.parse(yaml: yaml)) }
        }
    }

    /// A billion laughs in YAML aliases: Yams must not expand it into memory.
    @Test func aYAMLAliasBombIsRefusedQuickly() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            yaml +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                + "]\n"
        }
        yaml += "entities: {E: {records: $, key: id, attributes: {id: integer}, filter: {id: {in: *a9}}}}\n"
        let started = Date()
        #expect(throws: MappingError.self) { _ = try Mapping.parse(yaml: yaml) }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func deeplyNestedYAMLIsRefused() {
        let yaml = "entities: " + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        #expect(throws: MappingError.self) { _ = try Mapping.parse(yaml: yaml) }
    }
}
