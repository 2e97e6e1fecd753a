import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Imports `text` (an input file named `name`) with `yaml` into `store`.
@discardableResult
func importText(
    _ yaml: String, _ name: String, _ text: String, store: String, hooks: [String: EntityHooks] = [:]
) throws -> ImportReport {
    try Importer(mapping: Mapping.parse(yaml: yaml), store: store, hooks: hooks).runBlocking(inputs: [TestPaths.file(name, text)])
}

func newStore() -> String { TestPaths.temporaryDirectory().appendingPathComponent("peer.sqlite").path }

/// The rebuilt test cases of MagicalRecord (MR-*) and CoreStore (CS-*) from
/// ../shared/research/peers.md §(c). MR-13 to MR-19 are relationship cases and
/// wait for the relationships issue.
@Suite struct MagicalRecordCases {
    @Test func mr1ScalarTypesWithExact64BitIntegers() throws {
        let store = newStore()
        try importText("""
            entities:
              Single:
                records: $
                key: []
                attributes: {stringTestAttribute: string, int16TestAttribute: integer, int32TestAttribute: integer,
                             int64TestAttribute: integer, decimalTestAttribute: decimal, doubleTestAttribute: double,
                             floatTestAttribute: float, booleanTestAttribute: boolean}
            """, "single.json", """
            {"stringTestAttribute": "This is a test value", "int16TestAttribute": 256, "int32TestAttribute": 32,
             "int64TestAttribute": 10158365420975381, "decimalTestAttribute": 1.2, "doubleTestAttribute": 124.3,
             "floatTestAttribute": 10000000000, "booleanTestAttribute": false}
            """, store: store)
        #expect(StoreReader(store).rows("SELECT * FROM Single") == [[
            "This is a test value", "256", "32", "10158365420975381", "1.2", "124.3", "10000000000.0", "0",
        ]])
        #expect(StoreReader(store).value("SELECT typeof(int64TestAttribute) FROM Single") == "integer")
    }

    @Test func mr2RenamedKeyAndMr16Failovers() throws {
        let store = newStore()
        try importText("""
            entities:
              E:
                records: $
                key: []
                attributes:
                  mappedStringAttribute: {source: mappedAttributeWithStringValue}
                  secondary: {source: [no_in_use, getting_warmer, actualMappedKey]}
                  flag: {type: boolean, default: "yes"}
            """, "e.json", #"{"mappedAttributeWithStringValue": "Mapped value", "actualMappedKey": "found"}"#, store: store)
        #expect(StoreReader(store).rows("SELECT * FROM E") == [["Mapped value", "found", "1"]])
    }

    @Test func mr3ExplicitNullBeatsDefaultAndMr6AbsentTakesIt() throws {
        let store = newStore()
        let yaml = """
            entities:
              E:
                records: $
                key: id
                attributes:
                  id: integer
                  number: {type: integer, default: "100"}
                  text: {type: string, default: "Set From Core Data Model Editor"}
            """
        try importText(yaml, "e.jsonl", "{\"id\": 1, \"number\": null}\n{\"id\": 2}\n", store: store)
        #expect(StoreReader(store).rows("SELECT id, number, text FROM E ORDER BY id")
            == [["1", nil, "Set From Core Data Model Editor"], ["2", "100", "Set From Core Data Model Editor"]])
    }

    @Test func mr4NumberIntoStringAndMr5StringIntoBoolean() throws {
        let store = newStore()
        try importText(
            "entities: {E: {records: $, key: [], attributes: {s: string, big: string, b: boolean}}}", "e.json",
            #"{"s": 10248909829, "big": 1.0248909829e10, "b": "true"}"#, store: store)
        #expect(StoreReader(store).rows("SELECT * FROM E") == [["10248909829", "10248909829", "1"]])
    }

    @Test func mr7DefaultDateMr8CustomPatternMr9Epochs() throws {
        let store = newStore()
        try importText("""
            entities:
              E:
                records: $
                key: []
                attributes:
                  iso: date
                  custom: {type: date, formats: ["M/d/yyyy H-mm-ss"]}
                  seconds: date
                  millis: {type: date, epoch: milliseconds}
                  either: {type: date, epoch: auto}
            """, "e.json", """
            {"iso": "2011-07-23T22:30:40Z", "custom": "8/5/2011 1-56-04", "seconds": 1388349428,
             "millis": 1388349427543, "either": "1388349427543"}
            """, store: store)
        #expect(StoreReader(store).rows("SELECT * FROM E") == [[
            "2011-07-23 22:30:40", "2011-08-05 01:56:04", "2013-12-29 20:37:08", "2013-12-29 20:37:07.543",
            "2013-12-29 20:37:07.543",
        ]])
    }

    @Test func mr10CustomConverterReceivesTheRawValue() throws {
        let store = newStore()
        let hooks = ["E": EntityHooks(valueHandlers: [
            "color": { raw in
                guard let text = raw.text, text.hasPrefix("rgba(") else { return nil }
                let parts = text.dropFirst(5).dropLast().split(separator: ",").compactMap { Double($0) }
                return .text(String(format: "%.3f %.3f %.3f %.0f", parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3]))
            },
        ])]
        try importText("entities: {E: {records: $, key: [], attributes: {color: string}}}", "e.json",
                       #"{"color": "rgba(64,128,225,1)"}"#, store: store, hooks: hooks)
        #expect(StoreReader(store).value("SELECT color FROM E") == "0.251 0.502 0.882 1")
    }

    @Test func mr11UnmappedKeysAreIgnored() throws {
        let store = newStore()
        let report = try importText("entities: {E: {records: $, key: [], attributes: {a: string}}}", "e.json",
                                    #"{"a": "x", "int16AsStringTestAttribute": "1", "decimalAsStringTestAttribute": "1.5"}"#, store: store)
        #expect(report[entity: "E"]?.inserted == 1)
        #expect(StoreReader(store).rows("SELECT name FROM pragma_table_info('E')") == [["a"]])
    }

    @Test func mr12NoKeyInsertsEveryRecord() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: \"$[*]\", key: [], attributes: {a: string}}}"
        let report = try importText(yaml, "e.json", #"[{"a": "same"}, {"a": "same"}, {"a": "same"}, {"a": "same"}]"#, store: store)
        #expect(report[entity: "E"]?.inserted == 4)
        #expect(StoreReader(store).count("E") == 4)
    }
}

@Suite struct CoreStoreCases {
    let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string}}}"

    @Test func cs1ShouldImportFalseSkipsInsertsAndUpdates() throws {
        let store = newStore()
        try importText(yaml, "a.jsonl", "{\"id\": 1, \"name\": \"old\"}\n", store: store)
        let skipAll = ["E": EntityHooks(shouldImport: { _ in false })]
        let report = try importText(yaml, "b.jsonl", "{\"id\": 1, \"name\": \"new\"}\n{\"id\": 2, \"name\": \"x\"}\n", store: store, hooks: skipAll)
        #expect(report[entity: "E"]?.skipped == 2)
        #expect(StoreReader(store).rows("SELECT id, name FROM E") == [["1", "old"]])
    }

    @Test func cs2SameKeyTwiceKeepsTheSecond() throws {
        let store = newStore()
        let report = try importText(yaml, "a.jsonl", "{\"id\": 7, \"name\": \"first\"}\n{\"id\": 7, \"name\": \"second\"}\n", store: store)
        #expect(report[entity: "E"]?.inserted == 1)
        #expect(StoreReader(store).rows("SELECT id, name FROM E") == [["7", "second"]])
    }

    @Test func cs3HooksSeeRecordsInSourceOrder() throws {
        let seen = OrderLog()
        let hooks = ["E": EntityHooks(didImport: { row in
            if case .integer(let id) = row["id"] { seen.add(Int(id)) }
        })]
        try importText(yaml, "a.jsonl", "{\"id\": 106}\n{\"id\": 107}\n{\"id\": 3}\n", store: newStore(), hooks: hooks)
        #expect(seen.values == [106, 107, 3])
    }

    @Test func cs4AThrowingHookStopsTheImportAndKeepsCommittedBatches() throws {
        struct Refused: Error {}
        let store = newStore()
        let hooks = ["E": EntityHooks(willImport: { record in
            if record.text(at: "name") == "bad" { throw Refused() }
        })]
        var options = ImportOptions()
        options.batch.maxRows = 2
        let lines = (1...5).map { "{\"id\": \($0), \"name\": \"\($0 == 4 ? "bad" : "ok")\"}" }.joined(separator: "\n")
        do {
            _ = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options, hooks: hooks)
                .runBlocking(inputs: [TestPaths.file("a.jsonl", lines)])
            Issue.record("the hook's error was lost")
        } catch {
            #expect("\(error)".contains("a hook failed"))
            #expect("\(error)".contains("record 4"))
        }
        #expect(StoreReader(store).rows("SELECT id FROM E ORDER BY id") == [["1"], ["2"]])
    }

    @Test func hooksForUnknownEntitiesAreMappingErrors() {
        #expect(throws: ImportError.self) {
            try Importer(mapping: Mapping.parse(yaml: yaml), store: newStore(), hooks: ["Nope": EntityHooks()])
        }
    }
}

final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [Int] = []
    var values: [Int] { lock.withLock { log } }
    func add(_ value: Int) { lock.withLock { log.append(value) } }
}
