import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// One conformance suite, three stores: every case runs into SQLite, into
/// PostgreSQL (a server the tests start) and into the tests' memory store
/// (``MemoryStore``), and each must give the SQLite store's reports and rows
/// after each run. The cases are those of the end-to-end, example,
/// relationship, write-mode, change-file, delete-missing and resume tests.
@Suite(
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct StoreConformanceTests {
    @Test(arguments: ConformanceCases.examples) func examples(_ test: ConformanceCase) throws {
        try StoreConformance.check(test)
    }

    @Test(arguments: ConformanceCases.relationships) func relationships(_ test: ConformanceCase) throws {
        try StoreConformance.check(test)
    }

    @Test(arguments: ConformanceCases.sync) func keepingInStep(_ test: ConformanceCase) throws {
        try StoreConformance.check(test)
    }
}

/// The cases, built from the corpus and small inputs written for them.
enum ConformanceCases {
    static func run(_ yaml: String?, _ inputs: [String], _ configure: (inout ImportOptions) -> Void = { _ in })
        -> ConformanceRun
    {
        // The stores' own semantics: a SQLite store's record digests (which
        // the other stores do not keep) have their own differential test.
        var options = ImportOptions()
        options.noSkip = true
        configure(&options)
        return ConformanceRun(yaml: yaml, inputs: inputs, options: options)
    }

    static func mapping(_ example: String) -> String {
        (try? String(
            contentsOfFile: TestPaths.repository.appendingPathComponent("Examples/\(example)/mapping.yml").path,
            encoding: .utf8)) ?? ""
    }

    static func file(_ name: String, _ text: String) -> String { TestPaths.file(name, text) }

    static let examples: [ConformanceCase] = {
        let se = mapping("stackexchange")
        let original =
            (try? String(contentsOfFile: TestPaths.corpus("stackexchange/french.meta/Tags.xml"), encoding: .utf8)) ?? ""
        let tags = file(
            "Tags.xml",
            original.replacingOccurrences(of: #"TagName="bug" Count="11""#, with: #"TagName="bug" Count="12""#))
        let osm = mapping("osm")
        return [
            ConformanceCase(
                name: "Stack Exchange: import, again, one change",
                runs: [
                    run(se, stackExchangeFiles()), run(se, stackExchangeFiles()), run(se, [tags]),
                ]),
            ConformanceCase(
                name: "Stack Exchange in key order",
                runs: [
                    run(se, stackExchangeFiles()) {
                        $0.order = .key
                        $0.batch.maxRows = 700
                    }
                ]),
            ConformanceCase(
                name: "GH Archive hour, twice",
                runs: [
                    run(mapping("gharchive"), [TestPaths.corpus("json/2015-01-01-12.json.gz")]),
                    run(mapping("gharchive"), [TestPaths.corpus("json/2015-01-01-12.json.gz")]),
                ]),
            ConformanceCase(
                name: "OpenStreetMap extract (ordered links, members with roles)",
                runs: [
                    run(osm, [TestPaths.corpus("osm/liechtenstein-2013-08-03.osm.bz2")]) { $0.format = .xml }
                ]),
            ConformanceCase(
                name: "OpenStreetMap API response, twice, then change files",
                runs: [
                    run(osm, [TestPaths.corpus("osm/winthrop.osm")]), run(osm, [TestPaths.corpus("osm/winthrop.osm")]),
                    run(mapping("osmchange"), ["osm/000466354.osc.gz", "osm/008-ch.osc.gz"].map(TestPaths.corpus)),
                ]),
            ConformanceCase(
                name: "MediaWiki pages",
                runs: [
                    run(
                        mapping("mediawiki"),
                        [
                            TestPaths.corpus(
                                "mediawiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
                        ]
                    ) {
                        $0.format = .xml
                    }
                ]),
            ConformanceCase(
                name: "Overpass elements",
                runs: [
                    run(mapping("overpass"), [TestPaths.corpus("json/overpass-response-3.json.gz")]) {
                        $0.format = .json
                    }
                ]),
            ConformanceCase(
                name: "Jenkins jobs", runs: [run(mapping("jenkins"), [TestPaths.corpus("json/apache_builds.json")])]),
        ]
    }()

    static let relationships: [ConformanceCase] = {
        let company = """
            entities:
              User: {records: $, key: id, attributes: {id: integer, name: string}, relationships: {company: {entity: Company, source: company}}}
              Company: {key: id, attributes: {id: integer, name: string}}
            """
        let users = (1...5).map {
            "{\"id\": \($0), \"name\": \"u\($0)\", \"company\": {\"id\": \($0 % 2), \"name\": \"c\($0 % 2)\"}}"
        }
        .joined(separator: "\n")
        let stub = """
            entities:
              Post: {records: $, key: id, attributes: {id: integer}, relationships: {owner: {entity: User, source: owner, missing: stub}}}
              User: {records: "$.users[*]", key: id, attributes: {id: integer, name: string}}
            """
        let tagged = """
            entities:
              Post: {records: $, key: id, attributes: {id: integer, title: string},
                     relationships: {tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}}}
              Tag: {key: name, attributes: {name: string}}
            """
        let union = tagged.replacingOccurrences(of: "missing: stub", with: "missing: stub, rule: union")
        func lines(_ rule: String) -> String {
            """
            entities:
              Order: {records: $, key: id, attributes: {id: integer},
                      relationships: {lines: {entity: Line, source: "lines[*]", many: true, rule: \(rule)}}}
              Line: {key: id, attributes: {id: integer, qty: integer}}
            """
        }
        let orders = file(
            "a.jsonl",
            """
            {"id": 1, "lines": [{"id": 10, "qty": 1}, {"id": 11, "qty": 2}, {"id": 12, "qty": 3}]}
            {"id": 2, "lines": [{"id": 20, "qty": 1}]}
            """)
        let changed = file("b.jsonl", #"{"id": 1, "lines": [{"id": 11, "qty": 2}, {"id": 12, "qty": 5}]}"#)
        func pages(_ rule: String) -> String {
            """
            entities:
              Page: {records: $, key: id, attributes: {id: integer},
                     relationships: {revision: {entity: Revision, source: revision, keyless: \(rule)}}}
              Revision: {key: [], attributes: {text: string, minor: boolean}}
            """
        }
        let revisions = file(
            "p.jsonl",
            (1...3).map { "{\"id\": \($0), \"revision\": {\"text\": \"v1 of \($0)\"}}" }.joined(separator: "\n"))
        let revised = file(
            "q.jsonl",
            "{\"id\": 2, \"revision\": {\"text\": \"v2 of 2\", \"minor\": true}}\n{\"id\": 3, \"revision\": null}")
        let people = """
            entities:
              Person: {records: "$[*]", key: id, attributes: {id: integer, name: string}, relationships: {friend: {entity: Person, source: friend}}}
            """
        return [
            ConformanceCase(
                name: "shared nested child",
                runs: [run(company, [file("u.jsonl", users)]), run(company, [file("u.jsonl", users)])]),
            ConformanceCase(
                name: "to-one stubs",
                runs: [
                    run(
                        stub,
                        [
                            file(
                                "p.jsonl",
                                "{\"id\": 1, \"owner\": 42}\n{\"id\": 2, \"owner\": \"42\"}\n{\"id\": 3, \"owner\": 7}")
                        ]),
                    run(stub, [file("p.jsonl", "{\"id\": 1, \"owner\": 43}")]),
                ]),
            ConformanceCase(
                name: "tag links replaced, stubbed, unchanged",
                runs: [
                    run(
                        tagged,
                        [
                            file(
                                "t.jsonl",
                                "{\"id\": 1, \"tags\": [\"a\", \"b\"]}\n{\"id\": 2, \"tags\": [\"b\", \"c\"]}")
                        ]),
                    run(
                        tagged,
                        [
                            file(
                                "t.jsonl",
                                "{\"id\": 1, \"tags\": [\"a\", \"b\"]}\n{\"id\": 2, \"tags\": [\"c\"]}\n{\"id\": 3, \"tags\": []}"
                            )
                        ]),
                    run(
                        tagged, [file("t.jsonl", "{\"id\": 1, \"tags\": [\"a\", \"b\"]}\n{\"id\": 2, \"tags\": null}")]),
                ]),
            ConformanceCase(
                name: "union links",
                runs: [
                    run(union, [file("t.jsonl", "{\"id\": 1, \"tags\": [\"a\"]}\n{\"id\": 1, \"tags\": [\"b\"]}")]),
                    run(
                        union,
                        [
                            file(
                                "t.jsonl",
                                "{\"id\": 1, \"tags\": [\"c\"]}\n{\"id\": 1, \"tags\": []}\n{\"id\": 1, \"tags\": [\"d\"]}"
                            )
                        ]),
                ]),
            ConformanceCase(
                name: "replace-and-delete",
                runs: [run(lines("replace-and-delete"), [orders]), run(lines("replace-and-delete"), [changed])]),
            ConformanceCase(
                name: "replace keeps dropped children",
                runs: [run(lines("replace"), [orders]), run(lines("replace"), [changed])]),
            ConformanceCase(
                name: "keyless reuse", runs: [run(pages("reuse"), [revisions]), run(pages("reuse"), [revised])]),
            ConformanceCase(
                name: "keyless create", runs: [run(pages("create"), [revisions]), run(pages("create"), [revised])]),
            ConformanceCase(
                name: "self references in key order",
                runs: [
                    run(people, [file("in.json", #"[{"id":2,"name":"Bob","friend":{"id":1}},{"id":1,"name":"Ann"}]"#)])
                    { $0.order = .key }
                ]),
        ]
    }()

    static let sync: [ConformanceCase] = {
        let modes = { (mode: String) in
            "entities: {E: {records: $, key: id, mode: \(mode), attributes: {id: integer, name: string, note: {type: string, default: d}}}}"
        }
        let base =
            "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: {type: string, default: d}}}}"
        let rows = { (ids: ClosedRange<Int>, name: String) in
            file(
                "e.jsonl",
                ids.map { "{\"id\": \($0), \"name\": \"\(name)\($0)\", \"note\": \"x\"}" }.joined(separator: "\n"))
        }
        let sparse = file("s.jsonl", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"note\": \"only\"}\n{\"id\": 3}")
        let overwrite =
            "entities: {E: {records: $, key: id, overwrite: [name], attributes: {id: integer, name: string, note: string}}}"
        let plain = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"
        let scoped = """
            entities:
              E: {records: $, key: id, delete-missing: true, delete-scope: {region: {equals: north}}, attributes: {id: integer, region: string}}
              F: {records: $, key: id, delete-missing: false, attributes: {id: integer, region: string}}
            """
        let regions = file(
            "r.jsonl",
            (1...6).map { "{\"id\": \($0), \"region\": \"\($0 <= 3 ? "north" : "south")\"}" }.joined(separator: "\n"))
        let group = """
            entities:
              Group: {records: $, key: id, attributes: {id: integer}, relationships: {members: {entity: Person, source: "members[*]", many: true}}}
              Person: {key: id, attributes: {id: integer}}
            """
        let typed = """
            entities:
              T: {records: $, key: id, attributes: {id: integer, price: decimal, seen: date, ok: boolean, ratio: double, extra: json, raw: binary}}
            """
        let values = file(
            "v.jsonl",
            """
            {"id": 1, "price": "12.50", "seen": "2015-01-01T12:00:00Z", "ok": true, "ratio": 0.1, "extra": {"b": [1, 2], "a": null}, "raw": "aGVsbG8="}
            {"id": 2, "price": 3, "seen": "2015-01-01", "ok": "no", "ratio": 2, "extra": "text", "raw": null}
            {"id": 3, "seen": 1420113600.25, "extra": 1.5}
            """)
        let once = rows(1...3, "n")
        let deleting = { (options: inout ImportOptions) in
            options.store.deleteMissing = true
            options.batch.maxRows = 100
        }
        return [
            ConformanceCase(
                name: "insert-only",
                runs: [run(base, [rows(1...3, "n")]), run(modes("insert-only"), [rows(2...5, "changed")])]),
            ConformanceCase(
                name: "update-only",
                runs: [run(base, [rows(1...3, "n")]), run(modes("update-only"), [rows(2...5, "changed")])]),
            ConformanceCase(
                name: "replace and sparse rows",
                runs: [
                    run(base, [rows(1...3, "n")]), run(modes("replace"), [sparse]), run(modes("replace"), [sparse]),
                    run(base, [sparse]),
                ]),
            ConformanceCase(
                name: "overwrite list",
                runs: [
                    run(overwrite, [file("o.jsonl", "{\"id\": 1, \"name\": \"a\", \"note\": \"first\"}")]),
                    run(overwrite, [file("o.jsonl", "{\"id\": 1, \"name\": \"b\", \"note\": \"second\"}")]),
                    run(overwrite, [file("o.jsonl", "{\"id\": 1, \"name\": \"b\", \"note\": \"third\"}")]),
                ]),
            ConformanceCase(
                name: "delete-missing of a tenth",
                runs: [
                    run(plain, [rows(1...1_000, "n")]),
                    run(
                        plain,
                        [
                            file(
                                "k.jsonl",
                                (1...1_000).filter { $0 % 10 != 3 }.map {
                                    "{\"id\": \($0), \"name\": \"n\($0)\", \"note\": \"x\"}"
                                }.joined(separator: "\n"))
                        ], deleting),
                ]),
            ConformanceCase(
                name: "delete-missing with a scope",
                runs: [
                    run(scoped, [regions]), run(scoped, [file("n.jsonl", "{\"id\": 1, \"region\": \"north\"}")]),
                ]),
            ConformanceCase(
                name: "deleted sources take their links",
                runs: [
                    run(group, [file("a.jsonl", "{\"id\": 1, \"members\": [1, 2]}\n{\"id\": 2, \"members\": [3]}")]),
                    run(group, [file("b.jsonl", "{\"id\": 2, \"members\": [3]}")]) { $0.store.deleteMissing = true },
                    run(group, [file("c.jsonl", "{\"id\": 1, \"members\": [5]}")]),
                ]),
            ConformanceCase(name: "every attribute type", runs: [run(typed, [values]), run(typed, [values])]),
            ConformanceCase(
                name: "a completed run resumed, then resumed with other options (refused)",
                runs: [
                    run(base, [once]), run(base, [once]) { $0.resume = true },
                    run(base, [once]) {
                        $0.resume = true
                        $0.store.deleteMissing = true
                    },
                ]),
            ConformanceCase(
                name: "zero-config, twice, then wider",
                runs: [
                    run(nil, [rows(1...50, "z")]), run(nil, [rows(1...50, "z")]),
                    run(nil, [file("w.jsonl", "{\"id\": 7, \"name\": \"wider\", \"added\": 1.5, \"flag\": true}")]),
                ]),
        ]
    }()
}
