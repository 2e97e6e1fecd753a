import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

/// Collects mapped rows of every entity.
final class Collector: RecordSink {
    let mappers: [RowMapper]
    var arenas: [RowArena]
    var routed: [[Int]] = []

    init(_ mapping: CompiledMapping) {
        mappers = mapping.mappers
        arenas = mapping.mappers.map { RowArena(columnCount: $0.schema.columns.count) }
    }

    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        routed.append(entities)
        for entity in entities { _ = try mappers[entity].appendRow(tree, root: 0, ordinal: ordinal, into: &arenas[entity]) }
    }

    /// Row `row` of entity `entity` as display strings.
    func row(_ entity: Int, _ row: Int) -> [String] {
        let arena = arenas[entity]
        return (0..<arena.columnCount).map { column in
            let cell = arena[row, column]
            switch cell {
            case .absent: return "-"
            case .null: return "null"
            case .integer(let value): return "\(value)"
            case .real(let value): return "\(value)"
            case .text: return arena.withText(cell) { "'" + String(decoding: $0, as: UTF8.self) + "'" }
            case .blob: return arena.withText(cell) { "x'" + $0.map { String($0, radix: 16) }.joined() + "'" }
            }
        }
    }
}

func assemble(_ yaml: String, xml: String? = nil, json: String? = nil, chunk: Int = 4096) throws -> Collector {
    let compiled = try CompiledMapping(Mapping.parse(yaml: yaml))
    let collector = Collector(compiled)
    let assembler = RecordAssembler(routes: compiled.routes, sink: collector)
    let bytes = Array((xml ?? json ?? "").utf8)
    if xml != nil {
        let parser = XMLPushParser(handler: assembler, name: "t.xml")
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try parser.feed($0) }
        }
        try parser.finish()
    } else {
        let parser = JSONPushParser(handler: assembler, name: "t.json", multipleValues: true)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try parser.feed($0) }
        }
        try parser.finish()
    }
    return collector
}

@Suite struct AssemblyTests {
    @Test func xmlRecordsByPathWithAttributesChildrenAndDefaults() throws {
        let yaml = """
            entities:
              Page:
                records: /wiki/page
                key: id
                attributes:
                  id: integer
                  title: string
                  user: {source: revision/contributor/username}
                  rev: {type: integer, source: revision/@id}
                  when: {type: date, source: revision/timestamp}
            """
        let xml = """
            <wiki><info><page><id>99</id></page></info>
            <page id="1"><title>A &amp; B</title><revision id="7"><timestamp>2020-01-02T03:04:05+01:00</timestamp>
            <contributor><username>ann</username></contributor></revision></page>
            <page><id> 2 </id><title>C</title></page></wiki>
            """
        for chunk in [1, 3, 4096] {
            let rows = try assemble(yaml, xml: xml, chunk: chunk)
            #expect(rows.arenas[0].rowCount == 2)
            #expect(rows.row(0, 0) == ["1", "'A & B'", "'ann'", "7", "'2020-01-02 02:04:05'"])
            #expect(rows.row(0, 1) == ["2", "'C'", "-", "-", "-"])
        }
    }

    @Test func jsonRecordsUnderANestedArray() throws {
        let yaml = """
            entities:
              Job:
                records: $.jobs[*]
                key: name
                attributes:
                  name: string
                  color: string
                  first: {type: integer, source: "builds[0].n"}
                  extra: json
            """
        let json = #"{"jobs": [{"name": "a", "color": "blue", "builds": [{"n": 5}], "extra": {"x": [1, "y\n"]}}, {"name": "b", "other": {"jobs": []}}], "views": [{"name": "no"}]}"#
        for chunk in [1, 4096] {
            let rows = try assemble(yaml, json: json, chunk: chunk)
            #expect(rows.arenas[0].rowCount == 2)
            #expect(rows.row(0, 0) == ["'a'", "'blue'", "5", #"'{"x":[1,"y\n"]}'"#])
            #expect(rows.row(0, 1) == ["'b'", "-", "-", "-"])
        }
    }

    @Test func oneRecordPathFeedsSeveralEntities() throws {
        let yaml = """
            entities:
              Event: {records: $, key: id, attributes: {id: string, login: {source: actor.login}}}
              Actor: {records: $, key: id, attributes: {id: {type: integer, source: actor.id}, login: {source: actor.login}}}
            """
        let rows = try assemble(yaml, json: #"{"id": "10", "actor": {"id": 3, "login": "x"}}"# + "\n")
        #expect(rows.routed == [[0, 1]])
        #expect(rows.row(0, 0) == ["'10'", "'x'"])
        #expect(rows.row(1, 0) == ["3", "'x'"])
    }

    @Test func badValueNamesEntityAndAttribute() throws {
        let yaml = "entities: {A: {records: $, key: id, attributes: {id: integer, n: integer, m: {type: integer, invalid: null}}}}"
        #expect(try assemble(yaml, json: #"{"id": 1, "n": 2, "m": "x"}"#).row(0, 0) == ["1", "2", "null"])
        do {
            _ = try assemble(yaml, json: #"{"id": 1, "n": "12a"}"#)
            Issue.record("a bad integer was accepted")
        } catch let error as ParseError {
            #expect("\(error)".contains("entity A, attribute n: expected an integer, found \"12a\""))
        }
    }

    @Test func missingKeyIsAnError() {
        let yaml = "entities: {A: {records: $, key: id, attributes: {id: integer, n: integer}}}"
        #expect(throws: ParseError.self) { try assemble(yaml, json: #"{"n": 2}"#) }
        #expect(throws: ParseError.self) { try assemble(yaml, json: #"{"id": null}"#) }
    }

    @Test func limitsStopDeepNestingAndHugeRecords() throws {
        let yaml = "entities: {A: {records: $, key: id, attributes: {id: integer}}}"
        let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        do {
            _ = try assemble(yaml, json: deep)
            Issue.record("5,000 levels were accepted")
        } catch let error as ParseError {
            #expect("\(error)".contains("max-depth"))
        }
    }
}

@Suite struct ValueTests {
    func convert(_ json: String, _ type: String) throws -> String {
        let rows = try assemble("entities: {A: {records: $, key: k, attributes: {k: integer, v: \(type)}}}", json: #"{"k": 1, "v": \#(json)}"#)
        return rows.row(0, 0)[1]
    }

    @Test func integersAreExact() throws {
        #expect(try convert("10158365420975381", "integer") == "10158365420975381")
        #expect(try convert("-9223372036854775808", "integer") == "-9223372036854775808")
        #expect(try convert(#""42""#, "integer") == "42")
        #expect(try convert("12.0", "integer") == "12")
        #expect(throws: ParseError.self) { try convert("9223372036854775808", "integer") }
        #expect(throws: ParseError.self) { try convert("1.5", "integer") }
    }

    @Test func numbersIntoStringsKeepTheirDigits() throws {
        #expect(try convert("10248909829", "string") == "'10248909829'")
        #expect(try convert("true", "string") == "'true'")
    }

    @Test func booleansAndDoubles() throws {
        #expect(try convert(#""True""#, "boolean") == "1")
        #expect(try convert(#""no""#, "boolean") == "0")
        #expect(try convert("false", "boolean") == "0")
        #expect(try convert("124.3", "double") == "124.3")
        #expect(try convert("1e10", "double") == "10000000000.0")
        #expect(throws: ParseError.self) { try convert(#""nan""#, "double") }
    }

    @Test func datesBecomeSortableUTC() throws {
        #expect(try convert(#""2011-07-23T22:30:40Z""#, "date") == "'2011-07-23 22:30:40'")
        #expect(try convert(#""2011-08-17T19:49:15.197""#, "date") == "'2011-08-17 19:49:15.197'")
        #expect(try convert(#""2015-01-01T00:30:00+02:00""#, "date") == "'2014-12-31 22:30:00'")
        #expect(try convert(#""2015-01-01 00:30:00-0130""#, "date") == "'2015-01-01 02:00:00'")
        #expect(try convert(#""2021-08-01""#, "date") == "'2021-08-01 00:00:00'")
        #expect(try convert(#""2020-02-29T01:02:03.1234567Z""#, "date") == "'2020-02-29 01:02:03.123456'")
        #expect(try convert("1388349428", "date") == "'2013-12-29 20:37:08'")
        #expect(throws: ParseError.self) { try convert(#""2021-02-30""#, "date") }
        #expect(throws: ParseError.self) { try convert(#""yesterday""#, "date") }
    }

    @Test func nullIsNullAndAbsentIsAbsent() throws {
        #expect(try convert("null", "integer") == "null")
        let rows = try assemble("entities: {A: {records: $, key: k, attributes: {k: integer, v: string}}}", json: #"{"k": 1}"#)
        #expect(rows.row(0, 0) == ["1", "-"])
    }
}

@Suite struct RecordTreeTests {
    @Test func whitespaceBetweenManyChildrenStaysLinear() throws {
        let children = String(repeating: "\n    <n id=\"1\"/>", count: 50_000)
        let yaml = "entities: {G: {records: /c/g, key: [], attributes: {ids: {type: json, source: \"n[*]/@id\", items: integer}, note: {source: \".\"}}}}"
        let rows = try assemble(yaml, xml: "<c><g> lead \(children)\n  tail </g></c>", chunk: 65_536)
        #expect(rows.arenas[0].rowCount == 1)
        // 50,000 ids of 1 plus commas and brackets, and the element's own text.
        #expect(rows.arenas[0].bytes.count < 200_000)
        #expect(rows.row(0, 0)[1] == "' lead \n    \n  tail '")
    }
}
