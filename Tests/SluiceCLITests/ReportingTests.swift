import Foundation
import SluiceTestSupport
import Testing

/// What `sluice import` tells its user: progress through every phase, the
/// summary of every table written, the warnings, `--quiet`, and the
/// completion script and manual page.
@Suite struct ReportingTests {
    /// Events with a nested actor and 0–3 tags (a link table with stubs).
    static let mapping = """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, title: string}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string}
          Tag:
            key: name
            attributes: {name: string}
        """

    static func events(_ count: Int, from first: Int = 0) -> String {
        (first..<(first + count)).map { number in
            let tags = ["a", "b", "c"].prefix(number % 4).map { "\"\($0)\"" }.joined(separator: ",")
            return
                #"{"id":\#(number * 7919 % 100_003),"title":"event \#(number)","actor":{"id":\#(number % 50),"login":"u\#(number % 50)"},"tags":[\#(tags)]}"#
        }.joined(separator: "\n") + "\n"
    }

    func importing(_ extra: [String], data: String, store: String? = nil) throws -> (CommandResult, String) {
        let directory = TestPaths.temporaryDirectory()
        let mapping = directory.appendingPathComponent("mapping.yml").path
        try Self.mapping.write(toFile: mapping, atomically: true, encoding: .utf8)
        let input = directory.appendingPathComponent("events.jsonl").path
        try data.write(toFile: input, atomically: true, encoding: .utf8)
        let into = store ?? directory.appendingPathComponent("s.sqlite").path
        return (try runCommand(sluice, ["import", "--mapping", mapping, "--into", into] + extra + [input]), into)
    }

    @Test func jsonProgressGoesThroughEveryPhase() throws {
        let (first, store) = try importing(["--batch-rows", "500"], data: Self.events(6_000))
        #expect(first.status == 0, "\(first.stderr)")
        // Every record parsed: a run that skips the 5,000 records it kept would neither read nor apply.
        let (result, _) = try importing(
            ["--progress", "json", "--delete-missing", "--no-skip", "--batch-rows", "500"],
            data: Self.events(5_000, from: 1_000), store: store)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is a JSON object: \(result.stderr)")
        let phases = objects.compactMap { $0["phase"] as? String }
        #expect(Set(phases).isSuperset(of: ["reading", "applying", "deleting", "checking", "done"]), "\(phases)")
        #expect(phases.last == "done")
        #expect(
            objects.last?["warning"] as? String
                == "delete-missing left Tag alone: the run saw none of its records (allow it with --allow-empty-delete)"
        )
        // Phases come in order.
        let order = ["reading", "applying", "deleting", "checking", "done"]
        #expect(phases.map { order.firstIndex(of: $0) ?? -1 } == phases.map { order.firstIndex(of: $0) ?? -1 }.sorted())
        let applied = Set(objects.filter { $0["phase"] as? String == "applying" }.compactMap { $0["table"] as? String })
        #expect(applied.contains("Event") && applied.contains("Event_tags"), "\(applied)")
        #expect(objects.first { $0["phase"] as? String == "deleting" }?["table"] as? String == "Event")
        let reading = try #require(objects.first { $0["phase"] as? String == "reading" })
        #expect(reading["bytesTotal"] as? Int ?? 0 > 0 && reading["secondsLeft"] is Double)
        let done = try #require(objects.last { $0["phase"] as? String == "done" })
        let event = (done["entities"] as? [String: Any])?["Event"] as? [String: Any]
        #expect(event?["inserted"] as? Int == 0 && event?["deleted"] as? Int == 1_000, "\(result.stderr.suffix(700))")
        #expect(done["rowsApplied"] as? Int == done["rowsTotal"] as? Int)
    }

    @Test func barProgressNamesThePhasesAndTheTimeLeft() throws {
        let (result, _) = try importing(["--progress", "bar", "--batch-rows", "500"], data: Self.events(4_000))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("reading 0 of 0 MiB") || result.stderr.contains("reading "))
        #expect(result.stderr.contains("applying Event_tags"))
        #expect(result.stderr.contains("ETA "))
        #expect(result.stderr.contains("done in "))
    }

    @Test func summaryNamesEveryTableWithLinksAndStubs() throws {
        let directory = TestPaths.temporaryDirectory()
        let stats = directory.appendingPathComponent("stats.json").path
        let (result, _) = try importing(["--stats-json", stats], data: Self.events(400))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.contains(["Event", "entity", "400", "0", "0", "0", "0", "0"]), "\(result.stdout)")
        #expect(lines.contains(["Actor", "entity", "50", "0", "0", "0", "0", "0"]), "\(result.stdout)")
        #expect(lines.contains(["Tag", "entity", "3", "0", "0", "0", "0", "3"]), "\(result.stdout)")
        #expect(lines.contains(["Event_tags", "link", "600", "0"]), "\(result.stdout)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let tables = json?["tables"] as? [[String: Any]] ?? []
        #expect(tables.map { $0["name"] as? String } == ["Event", "Actor", "Tag", "Event_tags"])
        #expect(tables.last?["kind"] as? String == "link" && tables.last?["inserted"] as? Int == 600)
        #expect(json?["warnings"] as? [String] == [])
    }

    @Test func quietPrintsNothingButWarnings() throws {
        let (result, store) = try importing(["--quiet"], data: Self.events(100) + Self.events(10))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("warning: Event: 10 records repeated a key"), "\(result.stderr)")
        #expect(StoreReader(store).count("Event") == 100)
    }

    @Test func repeatedKeysAreCountedInEitherOrder() throws {
        for order in ["key", "input"] {
            let (result, _) = try importing(["--order", order], data: Self.events(300) + Self.events(25, from: 100))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("warning: Event: 25 records repeated a key"), "\(order): \(result.stderr)")
            // Actors recur in every record by design: no warning for them.
            #expect(!result.stderr.contains("Actor:"), "\(order): \(result.stderr)")
        }
    }

    /// In a change file the last action on a key wins; the warning said the
    /// records were "combined" (issue 25).
    @Test func repeatedKeysInAChangeFileSayTheLastActionWon() throws {
        let change = TestPaths.file(
            "day.osc",
            """
            <osmChange version="0.6">
              <create><node id="1" lat="1" lon="2" version="1"><tag k="a" v="b"/></node><node id="2" lat="1" lon="2" version="1"/></create>
              <modify><node id="1" lat="3" lon="4" version="2"/></modify>
              <delete><node id="2" version="2"/></delete>
            </osmChange>
            """)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("osm.sqlite").path
        let mapping = TestPaths.repository.appendingPathComponent("Examples/osmchange/mapping.yml").path
        let result = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, change])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "Node: 2 records repeated a key an earlier record of this run had; the last action on each key won"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("combined"), "\(result.stderr)")
        #expect(StoreReader(store).rows("SELECT id, lat, tags FROM Node") == [["1", "3.0", "{}"]])
    }

    @Test func aMappingThatMatchesNothingIsAWarning() throws {
        let directory = TestPaths.temporaryDirectory()
        let mapping = directory.appendingPathComponent("m.yml").path
        try "entities:\n  Row:\n    records: /rows/row\n    key: Id\n    attributes: {Id: integer}\n"
            .write(toFile: mapping, atomically: true, encoding: .utf8)
        let input = directory.appendingPathComponent("posts.xml").path
        try "<posts><row Id=\"1\"/></posts>".write(toFile: input, atomically: true, encoding: .utf8)
        let stats = directory.appendingPathComponent("stats.json").path
        let result = try runCommand(
            sluice,
            [
                "import", "--mapping", mapping, "--into", directory.appendingPathComponent("s.sqlite").path,
                "--stats-json", stats, input,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("warning: \(input): no record matched the mapping (record paths: /rows/row)"),
            "\(result.stderr)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        #expect((json?["warnings"] as? [String])?.count == 1)
    }

    @Test func anAbsentKeyListsTheMembersThatExist() throws {
        let directory = TestPaths.temporaryDirectory()
        let result = try runCommand(
            sluice,
            [
                "import", "--into", directory.appendingPathComponent("s.sqlite").path, "--entity", "Item", "--key",
                "id", "-",
            ],
            input: Data("{\"item_id\": 1, \"name\": \"a\", \"price\": 2}\n".utf8))
        #expect(result.status == 65)
        #expect(result.stderr.contains("record 1"))
        #expect(
            result.stderr.contains("the record has no key member; its members are: item_id, name, price"),
            "\(result.stderr)")
    }

    @Test func jsonProgressReportsErrorsAsJSON() throws {
        let (result, _) = try importing(["--progress", "json"], data: Self.events(10) + "{\"id\": \n")
        #expect(result.status == 65)
        let last = try #require(result.stderr.split(separator: "\n").last)
        let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        #expect(object?["exit"] as? Int == 65)
        #expect((object?["error"] as? String)?.contains("record 11") == true, "\(result.stderr)")
    }

    @Test func completionScriptsAreGenerated() throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try runCommand(sluice, ["--generate-completion-script", shell])
            #expect(result.status == 0)
            #expect(result.stdout.contains("import") && result.stdout.contains("--delete-missing"), "\(shell)")
        }
    }

    /// The committed manual page (docs/sluice.1, written by argument-parser's
    /// generate-manual plugin) documents every option of every command
    /// with the help text the binary has now; `scripts/install.sh
    /// --man-only` writes it anew.
    @Test func theManualPageDocumentsEveryOptionAsItIsNow() throws {
        let page = try String(contentsOf: TestPaths.repository.appendingPathComponent("docs/sluice.1"), encoding: .utf8)
        let lines = page.split(separator: "\n").map(String.init)
        let dump = try runCommand(sluice, ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let commands = try #require((root["command"] as? [String: Any])?["subcommands"] as? [[String: Any]])
        #expect(commands.count >= 4)
        for command in commands {
            let name = command["commandName"] as? String ?? ""
            if let abstract = command["abstract"] as? String { #expect(page.contains(abstract), "\(name)'s abstract") }
            // Each command's options follow its `.It Em name` line.
            let section = try #require(lines.firstIndex(of: ".It Em \(name)"), "\(name) is not in docs/sluice.1")
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["kind"] as? String != "positional", let abstract = argument["abstract"] as? String,
                    let names = argument["names"] as? [[String: Any]],
                    let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String,
                    long != "help", long != "version"
                else { continue }
                // mdoc: `.It Fl -into Ar into` (or `.It Fl q , -quiet`), then the help text.
                let item = lines[section...].firstIndex {
                    $0.hasPrefix(".It Fl ") && $0.split(separator: " ").contains("-" + Substring(long))
                }
                #expect(item != nil, "\(name) --\(long) is not in docs/sluice.1: run scripts/install.sh --man-only")
                if let item {
                    #expect(lines[item + 1] == abstract, "\(name) --\(long): docs/sluice.1 has an older help text")
                }
            }
        }
    }
}
