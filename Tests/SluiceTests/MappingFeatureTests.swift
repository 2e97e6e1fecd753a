import Sluice
import SluiceTestSupport
import Testing

/// The same records as XML and as JSON, imported with mappings that differ
/// only in their paths: every mapping feature is checked on both.
struct Twin {
    var xmlYAML: String
    var xml: String
    var jsonYAML: String
    var json: String

    /// Runs both and returns (report, rows of `sql`) for each.
    func run(_ sql: String) throws -> [(ImportReport, [[String?]])] {
        try [(xmlYAML, "in.xml", xml), (jsonYAML, "in.jsonl", json)].map { yaml, name, text in
            let store = newStore()
            let report = try importText(yaml, name, text, store: store)
            return (report, StoreReader(store).rows(sql))
        }
    }
}

@Suite struct MappingFeatureTests {
    @Test func compoundKeysAndKeyNormalisation() throws {
        let twin = Twin(
            xmlYAML:
                "entities: {E: {records: /osm/*, key: [type, id], attributes: {type: {source: '@t'}, id: integer, v: string}}}",
            xml: #"<osm><node t="node" id="1" v="a"/><way t="way" id="1" v="b"/><node t="node" id=" 1 " v="c"/></osm>"#,
            jsonYAML:
                "entities: {E: {records: $, key: [type, id], attributes: {type: {source: t}, id: integer, v: string}}}",
            json: """
                {"t": "node", "id": 1, "v": "a"}
                {"t": "way", "id": 1, "v": "b"}
                {"t": "node", "id": "1", "v": "c"}
                """)
        for (report, rows) in try twin.run("SELECT type, id, v FROM E ORDER BY type, id") {
            #expect(report[entity: "E"]?.inserted == 2)
            #expect(rows == [["node", "1", "c"], ["way", "1", "b"]])
        }
    }

    @Test func compoundKeysUpdateAcrossRuns() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: [a, b], attributes: {a: string, b: integer, v: integer}}}"
        try importText(
            yaml, "1.jsonl",
            (1...300).map { "{\"a\": \"k\($0 % 3)\", \"b\": \($0), \"v\": 0}" }.joined(separator: "\n"), store: store)
        let report = try importText(
            yaml, "2.jsonl",
            (1...300).map { "{\"a\": \"k\($0 % 3)\", \"b\": \($0), \"v\": \($0 % 2)}" }.joined(separator: "\n"),
            store: store)
        #expect(report[entity: "E"]?.updated == 150)
        // The other 150 records are those of the first run: not parsed (record digests).
        #expect(report.unchangedRecords == 150)
    }

    @Test func missingKeysAreSkippedAndCountedWhenAsked() throws {
        let twin = Twin(
            xmlYAML: "entities: {E: {records: /r/row, key: id, missing-key: skip, attributes: {id: integer}}}",
            xml: #"<r><row id="1"/><row/><row id="2"/></r>"#,
            jsonYAML: "entities: {E: {records: $, key: id, missing-key: skip, attributes: {id: integer}}}",
            json: "{\"id\": 1}\n{}\n{\"id\": null}\n{\"id\": 2}\n")
        let results = try twin.run("SELECT id FROM E ORDER BY id")
        #expect(results[0].0[entity: "E"]?.skipped == 1)
        #expect(results[1].0[entity: "E"]?.skipped == 2)
        for (_, rows) in results { #expect(rows == [["1"], ["2"]]) }
    }

    @Test func filtersSkipRecordsAndCountThem() throws {
        let twin = Twin(
            xmlYAML: """
                entities: {Q: {records: /posts/row, key: Id, filter: {"@PostTypeId": {in: ["1"]}, "@Title": {exists: true}},
                               attributes: {Id: integer, Title: string}}}
                """,
            xml:
                #"<posts><row Id="1" PostTypeId="1" Title="a"/><row Id="2" PostTypeId="2"/><row Id="3" PostTypeId="1"/></posts>"#,
            jsonYAML: """
                entities: {Q: {records: $, key: Id, filter: {PostTypeId: {equals: "1"}, Title: {exists: true}},
                               attributes: {Id: integer, Title: string}}}
                """,
            json:
                "{\"Id\": 1, \"PostTypeId\": 1, \"Title\": \"a\"}\n{\"Id\": 2, \"PostTypeId\": 2}\n{\"Id\": 3, \"PostTypeId\": 1}\n"
        )
        for (report, rows) in try twin.run("SELECT Id, Title FROM Q") {
            #expect(report[entity: "Q"]?.skipped == 2)
            #expect(rows == [["1", "a"]])
        }
    }

    @Test func decimalBinaryAndInvalidAsNull() throws {
        let twin = Twin(
            xmlYAML: """
                entities: {E: {records: /r/row, key: id, attributes: {id: integer, price: decimal, data: binary,
                               n: {type: integer, invalid: null}}}}
                """,
            xml: #"<r><row id="1" price="19.90" data="aGVsbG8=" n="x"/></r>"#,
            jsonYAML: """
                entities: {E: {records: $, key: id, attributes: {id: integer, price: decimal, data: binary,
                               n: {type: integer, invalid: null}}}}
                """,
            json: #"{"id": 1, "price": 19.90, "data": "aGVsbG8=", "n": "x"}"#)
        for (_, rows) in try twin.run("SELECT price, CAST(data AS TEXT), typeof(data), n FROM E") {
            #expect(rows == [["19.90", "hello", "blob", nil]])
        }
    }

    @Test func nestedPathsAndElementText() throws {
        let twin = Twin(
            xmlYAML: """
                entities: {P: {records: /wiki/page, key: id, attributes: {id: integer, user: {source: revision/contributor/username},
                               rev: {type: integer, source: revision/@id}, text: {source: revision/text}}}}
                """,
            xml:
                "<wiki><page><id>5</id><revision id=\"9\"><contributor><username>ann</username></contributor><text>hi &amp; bye</text></revision></page></wiki>",
            jsonYAML: """
                entities: {P: {records: $, key: id, attributes: {id: integer, user: {source: revision.contributor.username},
                               rev: {type: integer, source: "revisions[0].id"}, text: {source: revision.text}}}}
                """,
            json:
                #"{"id": 5, "revision": {"contributor": {"username": "ann"}, "text": "hi & bye"}, "revisions": [{"id": 9}]}"#
        )
        for (_, rows) in try twin.run("SELECT id, user, rev, text FROM P") {
            #expect(rows == [["5", "ann", "9", "hi & bye"]])
        }
    }

    @Test func absentLeavesStoredValuesAndNullClears() throws {
        for (yaml, name, first, second) in [
            (
                "entities: {E: {records: /r/row, key: id, attributes: {id: integer, a: string, b: string}}}", "x.xml",
                #"<r><row id="1" a="x" b="y"/></r>"#, #"<r><row id="1" a="z"/></r>"#
            ),
            (
                "entities: {E: {records: $, key: id, attributes: {id: integer, a: string, b: string}}}", "x.jsonl",
                #"{"id": 1, "a": "x", "b": "y"}"#, #"{"id": 1, "a": "z", "b": null}"#
            ),
        ] {
            let store = newStore()
            try importText(yaml, name, first, store: store)
            try importText(yaml, name, second, store: store)
            let expected: [String?] = name.hasSuffix("xml") ? ["z", "y"] : ["z", nil]
            #expect(StoreReader(store).rows("SELECT a, b FROM E") == [expected])
        }
    }

    @Test func mappingErrorsForNewOptions() {
        do {
            _ = try Mapping.parse(
                yaml: """
                    entities:
                      E:
                        records: $
                        key: [a, a]
                        missing-key: maybe
                        filter: {x: {like: "%"}}
                        attributes:
                          a: {type: json}
                          d: {type: date, formats: ["HH:mm"], epoch: hours}
                          s: {type: string, formats: ["yyyy"]}
                    """, file: "m.yml")
            Issue.record("accepted")
        } catch {
            let text = "\(error)"
            for expected in [
                "missing-key", "unknown condition `like`", "epoch", "needs a year (y), month (M) and day (d)",
                "`formats` is for date attributes", "cannot be of type json", "names an attribute twice",
            ] {
                #expect(text.contains(expected), "\(expected)")
            }
        }
    }

    @Test func failoverSourcesDatesAndEpochs() throws {
        let twin = Twin(
            xmlYAML: """
                entities: {E: {records: /r/row, key: id, attributes: {id: integer, name: {source: ["@nick", "@name", "fullname"]},
                               when: {type: date, formats: ["dd.MM.yyyy HH:mm", "MMM d, yyyy"]}, at: {type: date, epoch: auto}}}}
                """,
            xml:
                #"<r><row id="1" name="a" when="05.08.2011 01:56" at="1388349427543"/><row id="2" when="Aug 5, 2011" at="1388349428"><fullname>b</fullname></row></r>"#,
            jsonYAML: """
                entities: {E: {records: $, key: id, attributes: {id: integer, name: {source: [nick, name, "full.name"]},
                               when: {type: date, formats: ["dd.MM.yyyy HH:mm", "MMM d, yyyy"]}, at: {type: date, epoch: auto}}}}
                """,
            json: """
                {"id": 1, "name": "a", "when": "05.08.2011 01:56", "at": 1388349427543}
                {"id": 2, "full": {"name": "b"}, "when": "Aug 5, 2011", "at": 1388349428}
                """)
        for (_, rows) in try twin.run("SELECT id, name, \"when\", at FROM E ORDER BY id") {
            #expect(
                rows == [
                    ["1", "a", "2011-08-05 01:56:00", "2013-12-29 20:37:07.543"],
                    ["2", "b", "2011-08-05 00:00:00", "2013-12-29 20:37:08"],
                ])
        }
    }

    @Test func hooksOnXMLRecords() throws {
        let store = newStore()
        let hooks = [
            "E": EntityHooks(
                shouldImport: { $0.text(at: "@skip") == nil },
                valueHandlers: ["name": { raw in raw.text.map { .text($0.uppercased()) } }])
        ]
        let report = try importText(
            "entities: {E: {records: /r/row, key: id, attributes: {id: integer, name: string}}}", "h.xml",
            #"<r><row id="1" name="ann"/><row id="2" name="bob" skip="yes"/></r>"#, store: store, hooks: hooks)
        #expect(report[entity: "E"]?.skipped == 1)
        #expect(StoreReader(store).rows("SELECT id, name FROM E") == [["1", "ANN"]])
    }
}
