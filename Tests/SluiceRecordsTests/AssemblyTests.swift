import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

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
        let json =
            #"{"jobs": [{"name": "a", "color": "blue", "builds": [{"n": 5}], "extra": {"x": [1, "y\n"]}}, {"name": "b", "other": {"jobs": []}}], "views": [{"name": "no"}]}"#
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
        let yaml =
            "entities: {A: {records: $, key: id, attributes: {id: integer, n: integer, m: {type: integer, invalid: null}}}}"
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
