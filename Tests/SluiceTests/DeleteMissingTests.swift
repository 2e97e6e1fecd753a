import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Imports JSON Lines text with `yaml` and `options` into `store`.
@discardableResult
func sync(_ yaml: String, _ text: String, store: String, options: ImportOptions = ImportOptions(), name: String = "in.jsonl") throws -> ImportReport {
    try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options).runBlocking(inputs: [TestPaths.file(name, text)])
}

func lines(_ ids: some Sequence<Int>, _ name: (Int) -> String = { "n\($0)" }) -> String {
    ids.map { "{\"id\": \($0), \"name\": \"\(name($0))\", \"note\": \"x\"}" }.joined(separator: "\n")
}

@Suite struct WriteModeTests {
    let base = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: {type: string, default: d}}}}"

    func withMode(_ mode: String) -> String {
        "entities: {E: {records: $, key: id, mode: \(mode), attributes: {id: integer, name: string, note: {type: string, default: d}}}}"
    }

    @Test func insertOnlyKeepsEditsAndAddsNewKeys() throws {
        let store = newStore()
        try sync(base, lines(1...3), store: store)
        let report = try sync(withMode("insert-only"), lines(2...5) { "changed\($0)" }, store: store)
        #expect(report[entity: "E"]?.inserted == 2)
        #expect(report[entity: "E"]?.updated == 0)
        #expect(StoreReader(store).rows("SELECT name FROM E ORDER BY id").map { $0[0] } == ["n1", "n2", "n3", "changed4", "changed5"])
    }

    @Test func updateOnlySkipsNewKeys() throws {
        let store = newStore()
        try sync(base, lines(1...3), store: store)
        let report = try sync(withMode("update-only"), lines(2...5) { "changed\($0)" }, store: store)
        #expect(report[entity: "E"]?.updated == 2)
        #expect(report[entity: "E"]?.skipped == 2)
        #expect(StoreReader(store).rows("SELECT name FROM E ORDER BY id").map { $0[0] } == ["n1", "changed2", "changed3"])
    }

    @Test func replaceResetsAbsentFieldsToTheirDefault() throws {
        let store = newStore()
        try sync(base, "{\"id\": 1, \"name\": \"a\", \"note\": \"kept?\"}", store: store)
        var report = try sync(withMode("replace"), "{\"id\": 1, \"name\": \"a\"}", store: store)
        #expect(report[entity: "E"]?.updated == 1)
        #expect(StoreReader(store).rows("SELECT name, note FROM E") == [["a", "d"]])
        report = try sync(withMode("replace"), "{\"id\": 1, \"name\": \"a\"}", store: store)
        #expect(report[entity: "E"]?.unchanged == 1)
    }

    @Test func runModeAppliesWhereTheMappingSetsNone() throws {
        let store = newStore()
        try sync(base, lines(1...2), store: store)
        var options = ImportOptions()
        options.store.mode = .insertOnly
        let report = try sync(base, lines(1...3) { "x\($0)" }, store: store, options: options)
        #expect(report[entity: "E"]?.inserted == 1 && report[entity: "E"]?.unchanged == 2)
    }

    @Test func overwriteListsWhatAnUpdateMayChange() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, overwrite: [name], attributes: {id: integer, name: string, note: string}}}"
        try sync(yaml, "{\"id\": 1, \"name\": \"a\", \"note\": \"first\"}", store: store)
        var report = try sync(yaml, "{\"id\": 1, \"name\": \"b\", \"note\": \"second\"}", store: store)
        #expect(report[entity: "E"]?.updated == 1)
        report = try sync(yaml, "{\"id\": 1, \"name\": \"b\", \"note\": \"third\"}", store: store)
        #expect(report[entity: "E"]?.unchanged == 1)
        #expect(StoreReader(store).rows("SELECT name, note FROM E") == [["b", "first"]])
    }
}

@Suite struct DeleteMissingTests {
    let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"

    var deleting: ImportOptions {
        var options = ImportOptions()
        options.store.deleteMissing = true
        options.batch.maxRows = 100
        return options
    }

    @Test func removingTenPercentOfRecordsDeletesExactlyThose() throws {
        let store = newStore()
        try sync(yaml, lines(1...1_000), store: store)
        let kept = (1...1_000).filter { $0 % 10 != 3 }
        let report = try sync(yaml, lines(kept), store: store, options: deleting)
        #expect(report[entity: "E"]?.deleted == 100)
        #expect(report[entity: "E"]?.unchanged == 900)
        let reader = StoreReader(store)
        #expect(reader.count("E") == 900)
        #expect(reader.value("SELECT count(*) FROM E WHERE id % 10 = 3") == "0")
        #expect(reader.value("SELECT count(*) FROM sqlite_schema WHERE name LIKE '_sluice_seen_%'") == "0")
    }

    @Test func aTruncatedInputDeletesNothingAndFails() throws {
        let store = newStore()
        try sync(yaml, lines(1...1_000), store: store)
        let cut = String(lines(1...1_000).prefix(20_000))
        #expect(throws: ImportError.self) { try sync(yaml, cut, store: store, options: deleting) }
        #expect(StoreReader(store).count("E") == 1_000)
        let status = try Status.read(store: store)
        #expect(status.runs.first?.status == "failed")
        #expect(status.runs.first?.error?.contains("in.jsonl:") == true)
    }

    @Test func anEntityWithNoRecordsIsNotWipedUnlessAllowed() throws {
        let two = """
            entities:
              E: {records: $, key: id, filter: {kind: {equals: e}}, attributes: {id: integer, kind: string}}
              F: {records: $, key: id, filter: {kind: {equals: f}}, attributes: {id: integer, kind: string}}
            """
        let store = newStore()
        try sync(two, "{\"id\": 1, \"kind\": \"e\"}\n{\"id\": 2, \"kind\": \"f\"}", store: store)
        var report = try sync(two, "{\"id\": 1, \"kind\": \"e\"}", store: store, options: deleting)
        #expect(report[entity: "F"]?.deleted == 0)
        #expect(report.warnings.count == 1 && report.warnings[0].contains("F"))
        var allow = deleting
        allow.allowEmptyDelete = true
        report = try sync(two, "{\"id\": 1, \"kind\": \"e\"}", store: store, options: allow)
        #expect(report[entity: "F"]?.deleted == 1)
    }

    @Test func scopeLimitsWhatIsDeletedAndEntitiesCanOptOut() throws {
        let scoped = """
            entities:
              E: {records: $, key: id, delete-missing: true, delete-scope: {region: {equals: north}},
                  attributes: {id: integer, region: string}}
              F: {records: $, key: id, delete-missing: false, attributes: {id: integer, region: string}}
            """
        let store = newStore()
        let all = (1...6).map { "{\"id\": \($0), \"region\": \"\($0 <= 3 ? "north" : "south")\"}" }.joined(separator: "\n")
        try sync(scoped, all, store: store)
        let report = try sync(scoped, "{\"id\": 1, \"region\": \"north\"}", store: store)
        #expect(report[entity: "E"]?.deleted == 2)
        #expect(report[entity: "F"]?.deleted == 0)
        #expect(StoreReader(store).rows("SELECT id FROM E ORDER BY id").map { $0[0] } == ["1", "4", "5", "6"])
        #expect(StoreReader(store).count("F") == 6)
    }

    @Test func deleteMissingNeedsAKey() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(yaml: "entities: {E: {records: $, key: [], delete-missing: true, attributes: {a: string}}}")
        }
    }
}

@Suite struct LedgerTests {
    @Test func runsAreRecordedWithTheirOutcome() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer}}}"
        try sync(yaml, "{\"id\": 1}\n{\"id\": 2}", store: store)
        #expect(throws: ImportError.self) { try sync(yaml, "{\"id\": 3}\n{\"id\": oops}", store: store, name: "bad.jsonl") }
        let status = try Status.read(store: store)
        #expect(status.runs.map(\.status) == ["failed", "completed"])
        #expect(status.runs[1].records == 2)
        #expect(status.runs[1].counts?.contains("\"inserted\": 2") == true)
        #expect(status.runs[0].error?.contains("bad.jsonl:2:") == true)
        #expect(status.tables.map(\.name) == ["E"])
        #expect(status.checkpoints.contains { $0.input.hasSuffix("in.jsonl") && $0.records == 2 })
    }

    @Test func statusOfAMissingStoreIsAnInputError() {
        #expect(throws: ImportError.self) { try Status.read(store: "/nonexistent/store.sqlite") }
    }
}

/// Several occurrences of a key in one run merge as updates across runs do:
/// absent fields keep their value, present ones win, the last occurrence
/// last. Before the fix the later occurrence replaced the row whole, so a
/// bare nested reference wiped the fields of the record it named.
@Suite struct RepeatedKeyTests {
    let people = """
        entities:
          Person:
            records: $[*]
            key: id
            attributes: {id: integer, name: string}
            relationships:
              friend: {entity: Person, source: friend}
        """

    func importing(_ yaml: String, _ json: String, order: ApplyOrder, mode: WriteMode = .upsert) throws -> String {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        options.store.mode = mode
        _ = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options).runBlocking(inputs: [TestPaths.file("in.json", json)])
        return store
    }

    @Test(arguments: [ApplyOrder.key, .input]) func aBareNestedReferenceKeepsTheFieldsOfItsRecord(order: ApplyOrder) throws {
        for json in [#"[{"id":1,"name":"Ann"},{"id":2,"name":"Bob","friend":{"id":1}}]"#,
                     #"[{"id":2,"name":"Bob","friend":{"id":1}},{"id":1,"name":"Ann"}]"#] {
            let store = try importing(people, json, order: order)
            #expect(StoreReader(store).rows("SELECT id, name, friend FROM Person ORDER BY id") == [["1", "Ann", nil], ["2", "Bob", "1"]], "\(json)")
        }
    }

    @Test(arguments: [ApplyOrder.key, .input]) func reciprocalGraphsKeepBothSides(order: ApplyOrder) throws {
        let yaml = """
            entities:
              Player:
                records: $[*]
                key: id
                attributes: {id: integer, name: string}
                relationships:
                  group: {entity: Group, source: group}
              Group:
                key: id
                attributes: {id: integer, title: string}
                relationships:
                  players: {entity: Player, source: "players[*]", many: true}
            """
        let json = #"[{"id":1,"name":"p1","group":{"id":7,"title":"g","players":[{"id":1},{"id":2}]}}]"#
        let store = try importing(yaml, json, order: order)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT id, name, \"group\" FROM Player ORDER BY id") == [["1", "p1", "7"], ["2", nil, nil]])
        #expect(reader.rows("SELECT id, title FROM \"Group\"") == [["7", "g"]])
    }

    @Test(arguments: [ApplyOrder.key, .input]) func laterPresentFieldsWinAndReplaceKeepsTheLastWhole(order: ApplyOrder) throws {
        let json = #"[{"id":1,"name":"Ann"},{"id":1,"friend":{"id":2}},{"id":1,"name":"Anna"},{"id":2,"name":"Bo"}]"#
        let merged = try importing(people, json, order: order)
        #expect(StoreReader(merged).rows("SELECT id, name, friend FROM Person ORDER BY id") == [["1", "Anna", "2"], ["2", "Bo", nil]])
        let replaced = try importing(people, json, order: order, mode: .replace)
        #expect(StoreReader(replaced).rows("SELECT id, name, friend FROM Person ORDER BY id") == [["1", "Anna", nil], ["2", "Bo", nil]])
    }
}

@Suite struct CancellationTests {
    /// A cancel during the key-ordered apply (the input read, some tables
    /// committed): before the fix the run finished every record.
    @Test func cancellingDuringTheKeyOrderedApplyStopsIt() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"
        var options = ImportOptions()
        options.batch.maxRows = 200
        let input = TestPaths.file("in.jsonl", lines((1...40_000).reversed()))
        let cancellation = ImportCancellation()
        let watcher = Thread {
            while StoreReader(store).count("E") <= 0 { usleep(500) }
            cancellation.cancel()
        }
        watcher.start()
        #expect(throws: ImportError.self) {
            try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options)
                .runBlocking(inputs: [input], cancellation: cancellation)
        }
        #expect(cancellation.isCancelled)
        #expect(StoreReader(store).count("E") < 40_000)
        #expect(try Status.read(store: store).runs.first?.status == "cancelled")
    }
}

/// Change files: records that say their key is gone delete it and its links.
@Suite struct ChangeFileDeletionTests {
    let yaml = """
        entities:
          E:
            records: $
            key: id
            delete-when: {op: {equals: d}}
            attributes: {id: integer, name: string}
            relationships:
              tags: {entity: T, source: "tags[*]", many: true, missing: stub}
          T:
            key: name
            attributes: {name: string}
        """

    @Test(arguments: [ApplyOrder.key, .input]) func tombstonesDeleteRowsAndLinksAndTheLastActionWins(order: ApplyOrder) throws {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        options.batch.maxRows = 3
        try sync(yaml, (1...6).map { #"{"id": \#($0), "name": "n\#($0)", "tags": ["a", "b"]}"# }.joined(separator: "\n"), store: store, options: options)
        let change = [
            #"{"id": 2, "op": "d"}"#,                                  // gone
            #"{"id": 3, "op": "d", "name": "ignored"}"#,               // gone, other fields ignored
            #"{"id": 4, "op": "d"}"#, #"{"id": 4, "name": "back", "tags": ["c"]}"#,   // deleted, then written again
            #"{"id": 7, "name": "new", "tags": ["a"]}"#, #"{"id": 7, "op": "d"}"#,    // written, then deleted
            #"{"id": 8, "op": "d"}"#,                                  // never stored
            #"{"id": 5, "name": "five"}"#,
        ].joined(separator: "\n")
        let report = try sync(yaml, change, store: store, options: options)
        // Key order sees each key's occurrences together: 2, 3 and 4 go (4
        // is then written again), 7 never reaches the table. In input order
        // 7 may be written by one batch and deleted by the next.
        if order == .key { #expect(report[entity: "E"]?.deleted == 3) } else { #expect((report[entity: "E"]?.deleted ?? 0) >= 3) }
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT id, name FROM E ORDER BY id") == [["1", "n1"], ["4", "back"], ["5", "five"], ["6", "n6"]])
        #expect(reader.rows("SELECT E_id, T_name FROM E_tags ORDER BY 1, 2")
            == [["1", "a"], ["1", "b"], ["4", "c"], ["5", "a"], ["5", "b"], ["6", "a"], ["6", "b"]])
        // The same change again ends in the same store.
        let before = [reader.rows("SELECT * FROM E ORDER BY id"), reader.rows("SELECT * FROM E_tags ORDER BY 1, 2")]
        let again = try sync(yaml, change, store: store, options: options)
        #expect([reader.rows("SELECT * FROM E ORDER BY id"), reader.rows("SELECT * FROM E_tags ORDER BY 1, 2")] == before)
        #expect(again[entity: "E"]?.updated == 0)
    }

    @Test func deletionsNeedAKeyAndTheirOwnPaths() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(yaml: "entities: {E: {records: $, key: [], delete-when: {op: {equals: d}}, attributes: {a: string}}}")
        }
        #expect(throws: MappingError.self) {
            try Mapping.parse(yaml: "entities: {E: {records: /a/b, delete-records: /a/b, key: id, attributes: {id: integer}}}")
        }
    }
}

/// A child entity in `update-only` mode skips new keys; before the fix the
/// parent's links to the skipped children were written anyway and counted
/// dangling.
@Suite struct SkippedChildLinkTests {
    func yaml(missing: String) -> String {
        """
        entities:
          P:
            records: $
            key: id
            attributes: {id: integer}
            relationships:
              kids: {entity: K, source: "kids[*]", many: true\(missing)}
          K:
            key: id
            mode: update-only
            attributes: {id: integer, name: string}
        """
    }

    @Test(arguments: [ApplyOrder.key, .input]) func linksGoOnlyToStoredChildrenUnlessTheMappingSaysOtherwise(order: ApplyOrder) throws {
        var options = ImportOptions()
        options.order = order
        let seed = "entities: {K: {records: $, key: id, attributes: {id: integer, name: string}}}"
        let input = #"{"id": 1, "kids": [{"id": 10, "name": "a"}, {"id": 11, "name": "b"}]}"#
        for (missing, expected) in [("", [["1", "10"]]), (", missing: dangling", [["1", "10"], ["1", "11"]])] {
            let store = newStore()
            try sync(seed, #"{"id": 10, "name": "old"}"#, store: store, options: options)
            let report = try sync(yaml(missing: missing), input, store: store, options: options)
            #expect(report[entity: "K"]?.updated == 1 && report[entity: "K"]?.skipped == 1)
            let reader = StoreReader(store)
            #expect(reader.rows("SELECT P_id, K_id FROM P_kids ORDER BY 2") == expected, "missing: \(missing)")
            #expect(report.dangling["P_kids"] == (missing.isEmpty ? nil : 1), "missing: \(missing)")
            #expect(reader.rows("SELECT id, name FROM K") == [["10", "a"]])
        }
    }
}

/// A mapping changed between runs: before the fix a changed type left the
/// column as it was and every later run reported every row updated, and a
/// changed key failed mid-run with `UNIQUE constraint failed`.
@Suite struct MappingChangeTests {
    func mapping(_ type: String, key: String = "id") -> String {
        "entities: {E: {records: $, key: \(key), attributes: {id: integer, code: string, n: \(type)}}}"
    }

    let input = (1...50).map { #"{"id": \#($0), "code": "c\#($0)", "n": \#($0 * 7)}"# }.joined(separator: "\n")

    @Test(arguments: [ApplyOrder.key, .input]) func aChangedTypeIsMigratedAndConverges(order: ApplyOrder) throws {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        try sync(mapping("integer"), input, store: store, options: options)
        try sync(#"entities: {E: {records: $, key: id, attributes: {id: integer}}}"#, "{\"id\": 1}", store: store, options: options)
        let changed = try sync(mapping("string"), input, store: store, options: options)
        #expect(changed.warnings.contains { $0.contains("n INTEGER → TEXT") }, "\(changed.warnings)")
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT type FROM pragma_table_info('E') WHERE name = 'n'") == [["TEXT"]])
        #expect(reader.value("SELECT typeof(n) || n FROM E WHERE id = 3") == "text21")
        #expect(changed[entity: "E"]?.updated == 0)
        let again = try sync(mapping("string"), input, store: store, options: options)
        #expect(again[entity: "E"]?.updated == 0 && again[entity: "E"]?.unchanged == 50)
        #expect(again.warnings.isEmpty)
        let back = try sync(mapping("integer"), input, store: store, options: options)
        #expect(back[entity: "E"]?.updated == 0)
        #expect(reader.value("SELECT typeof(n) FROM E WHERE id = 3") == "integer")
    }

    @Test func aChangedKeyIsRefusedBeforeAnyWrite() throws {
        let store = newStore()
        try sync(mapping("integer"), input, store: store)
        let before = StoreReader(store).rows("SELECT * FROM E ORDER BY id")
        do {
            try sync(mapping("integer", key: "code"), input, store: store)
            Issue.record("a changed key was accepted")
        } catch let error as ImportError {
            #expect("\(error)".contains("the table is keyed by (id) but the mapping's key is (code)"), "\(error)")
        }
        #expect(StoreReader(store).rows("SELECT * FROM E ORDER BY id") == before)
    }
}
