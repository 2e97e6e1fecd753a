import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The rebuilt test cases of MagicalRecord (MR-1 to MR-12) from that library's
/// own test suite; its relationship cases are MagicalRecordRelationshipCaseTests.
@Suite struct MagicalRecordCaseTests {
    @Test func mr1ScalarTypesWithExact64BitIntegers() throws {
        let store = newStore()
        try importText(
            """
            entities:
              Single:
                records: $
                key: []
                attributes: {stringTestAttribute: string, int16TestAttribute: integer, int32TestAttribute: integer,
                             int64TestAttribute: integer, decimalTestAttribute: decimal, doubleTestAttribute: double,
                             floatTestAttribute: float, booleanTestAttribute: boolean}
            """, "single.json",
            """
            {"stringTestAttribute": "This is a test value", "int16TestAttribute": 256, "int32TestAttribute": 32,
             "int64TestAttribute": 10158365420975381, "decimalTestAttribute": 1.2, "doubleTestAttribute": 124.3,
             "floatTestAttribute": 10000000000, "booleanTestAttribute": false}
            """, store: store)
        #expect(
            StoreReader(store).rows("SELECT * FROM Single") == [
                [
                    "This is a test value", "256", "32", "10158365420975381", "1.2", "124.3", "10000000000.0", "0",
                ]
            ])
        #expect(StoreReader(store).value("SELECT typeof(int64TestAttribute) FROM Single") == "integer")
    }

    @Test func mr2RenamedKeyAndMr16Failovers() throws {
        let store = newStore()
        try importText(
            """
            entities:
              E:
                records: $
                key: []
                attributes:
                  mappedStringAttribute: {source: mappedAttributeWithStringValue}
                  secondary: {source: [no_in_use, getting_warmer, actualMappedKey]}
                  flag: {type: boolean, default: "yes"}
            """, "e.json", #"{"mappedAttributeWithStringValue": "Mapped value", "actualMappedKey": "found"}"#,
            store: store)
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
        #expect(
            StoreReader(store).rows("SELECT id, number, text FROM E ORDER BY id")
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
        try importText(
            """
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
            """, "e.json",
            """
            {"iso": "2011-07-23T22:30:40Z", "custom": "8/5/2011 1-56-04", "seconds": 1388349428,
             "millis": 1388349427543, "either": "1388349427543"}
            """, store: store)
        #expect(
            StoreReader(store).rows("SELECT * FROM E") == [
                [
                    "2011-07-23 22:30:40", "2011-08-05 01:56:04", "2013-12-29 20:37:08", "2013-12-29 20:37:07.543",
                    "2013-12-29 20:37:07.543",
                ]
            ])
    }

    @Test func mr10CustomConverterReceivesTheRawValue() throws {
        let store = newStore()
        let hooks = [
            "E": EntityHooks(valueHandlers: [
                "color": { raw in
                    guard let text = raw.text, text.hasPrefix("rgba(") else { return nil }
                    let parts = text.dropFirst(5).dropLast().split(separator: ",").compactMap { Double($0) }
                    return .text(
                        String(format: "%.3f %.3f %.3f %.0f", parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3]))
                }
            ])
        ]
        try importText(
            "entities: {E: {records: $, key: [], attributes: {color: string}}}", "e.json",
            #"{"color": "rgba(64,128,225,1)"}"#, store: store, hooks: hooks)
        #expect(StoreReader(store).value("SELECT color FROM E") == "0.251 0.502 0.882 1")
    }

    @Test func mr11UnmappedKeysAreIgnored() throws {
        let store = newStore()
        let report = try importText(
            "entities: {E: {records: $, key: [], attributes: {a: string}}}", "e.json",
            #"{"a": "x", "int16AsStringTestAttribute": "1", "decimalAsStringTestAttribute": "1.5"}"#, store: store)
        #expect(report[entity: "E"]?.inserted == 1)
        #expect(StoreReader(store).rows("SELECT name FROM pragma_table_info('E')") == [["a"]])
    }

    @Test func mr12NoKeyInsertsEveryRecord() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: \"$[*]\", key: [], attributes: {a: string}}}"
        let report = try importText(
            yaml, "e.json", #"[{"a": "same"}, {"a": "same"}, {"a": "same"}, {"a": "same"}]"#, store: store)
        #expect(report[entity: "E"]?.inserted == 4)
        #expect(StoreReader(store).count("E") == 4)
    }
}
