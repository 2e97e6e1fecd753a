import Foundation
import Sluice
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// A deterministic mutation fuzzer over the parsers, the mapping and the
/// store (issue 17), seeded from the repository's own samples. Every case
/// must end in success or in an ImportError that names the input; never a
/// crash, a store error or a hang. CI runs the fixed seed and case count
/// below (well under a minute); for a longer campaign:
///
///     SLUICE_FUZZ_CASES=100000 SLUICE_FUZZ_SEED=7 swift test --filter FuzzTests
@Suite(.serialized) struct FuzzTests {
    static let cases = Int(ProcessInfo.processInfo.environment["SLUICE_FUZZ_CASES"] ?? "") ?? 2_000
    static let seed = UInt64(ProcessInfo.processInfo.environment["SLUICE_FUZZ_SEED"] ?? "") ?? 20_261_123

    /// Seeds: the shipped Stack Exchange sample (XML) and JSON made here.
    static let seeds: [(name: String, bytes: [UInt8])] = {
        let sample = TestPaths.repository.appendingPathComponent("Examples/stackexchange/sample")
        var seeds = ["Posts.xml", "Users.xml", "Tags.xml"].compactMap { name -> (String, [UInt8])? in
            guard let data = FileManager.default.contents(atPath: sample.appendingPathComponent(name).path) else {
                return nil
            }
            return (name, Array(data.prefix(24_000)))
        }
        let events = (0..<60).map {
            #"{"id": \#($0), "type": "t\#($0 % 3)", "at": "2024-05-0\#($0 % 9 + 1)T12:00:00Z", "n": \#(Double($0) * 1.5), "ok": \#($0 % 2 == 0), "actor": {"id": \#($0 % 7), "login": "u\#($0 % 7)"}, "tags": ["a", "b\#($0 % 4)"], "text": "caf\u00e9 \"q\" <x> & y"}"#
        }
        seeds.append(("events.jsonl", Array((events.joined(separator: "\n") + "\n").utf8)))
        seeds.append(("events.json", Array(("[" + events.joined(separator: ",\n") + "]").utf8)))
        return seeds
    }()

    static let jsonMapping = """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, type: string, at: date, n: double, ok: boolean, text: string}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor: {key: id, attributes: {id: integer, login: string}}
          Tag: {key: name, attributes: {name: string}}
        """

    @Test func mutatedInputsFailCleanlyOrImport() throws {
        var mutator = Mutator(seed: Self.seed)
        let directory = TestPaths.temporaryDirectory()
        var outcomes: [String: Int] = [:]
        let xmlMapping = try Mapping.load(
            path: TestPaths.repository.appendingPathComponent("Examples/stackexchange/mapping.yml").path)
        let jsonMapping = try Mapping.parse(yaml: Self.jsonMapping)
        for number in 0..<Self.cases {
            let (name, seed) = Self.seeds[number % Self.seeds.count]
            let other = Self.seeds[(number * 7 + 3) % Self.seeds.count].bytes
            let bytes = mutator.mutate(seed, splicing: other)
            let path = directory.appendingPathComponent("case\(number)-\(name)").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let format: InputFormat = name.hasSuffix(".xml") ? .xml : (name.hasSuffix(".jsonl") ? .jsonl : .json)
            var options = ImportOptions()
            options.format = format
            options.order = number % 2 == 0 ? .key : .input
            options.batch.maxRows = 50
            let store = directory.appendingPathComponent("case\(number).sqlite").path
            let checked: String
            do {
                _ = try Checker.check(path: path, format: format)
                checked = "well-formed"
            } catch {
                checked = "malformed"
                #expect("\(error)".contains(path), "case \(number): check did not name the input: \(error)")
            }
            do {
                _ = try Importer(mapping: format == .xml ? xmlMapping : jsonMapping, store: store, options: options)
                    .runBlocking(inputs: [path])
                outcomes["\(checked), imported", default: 0] += 1
                #expect(checked == "well-formed", "case \(number): a malformed input was imported")
            } catch {
                switch error {
                case .parse, .danglingReferences: outcomes["\(checked), refused", default: 0] += 1
                default: Issue.record("case \(number) (\(path)): \(error)")
                }
                if case .parse = error { #expect("\(error)".contains(path), "case \(number): \(error)") }
                #expect(StoreReader(store).value("PRAGMA integrity_check") ?? "ok" == "ok", "case \(number)")
            }
        }
        print(
            "fuzz: \(Self.cases) cases from seed \(Self.seed): "
                + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(outcomes.values.reduce(0, +) == Self.cases)
    }

    /// Mutated mapping files: parsed or refused as a mapping, never a crash.
    @Test func mutatedMappingsAreParsedOrRefused() throws {
        var mutator = Mutator(seed: Self.seed &+ 1)
        let seeds = try ["stackexchange", "osm", "gharchive", "osmchange"].map {
            Array(try Data(contentsOf: TestPaths.repository.appendingPathComponent("Examples/\($0)/mapping.yml")))
        }
        var refused = 0
        for number in 0..<Self.cases {
            let text = String(
                decoding: mutator.mutate(seeds[number % seeds.count], splicing: seeds[(number + 1) % seeds.count]),
                as: UTF8.self)
            do {
                _ = try CompiledMapping(Mapping.parse(yaml: text, file: "case\(number).yml"))
            } catch {
                refused += 1
                #expect("\(error)".contains("case\(number).yml"), "case \(number): \(error)")
            }
        }
        print("fuzz: \(Self.cases) mutated mappings, \(refused) refused")
        #expect(refused > 0)
    }
}
