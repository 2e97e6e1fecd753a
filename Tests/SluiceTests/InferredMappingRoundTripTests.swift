import Sluice
import SluiceTestSupport
import Testing

/// What `sluice infer` prints reads back as the mapping it inferred
/// (issue 26), for every corpus the inference tests cover and for member
/// names YAML reads otherwise. Each corpus's mapping is inferred from its
/// first 4 MiB, which gives every corpus its mapping's shape at a fraction
/// of the time.
@Suite struct InferredMappingRoundTripTests {
    @Test(arguments: inferenceCorpora.map(\.file))
    func inferredMappingReadsBackTheSame(file: String) throws {
        let (mapping, _) = try Inferrer.infer(path: TestPaths.corpus(file), sampleBytes: 4 << 20)
        #expect(!mapping.entities.isEmpty)
        #expect(MappingRoundTrip.problem(mapping) == nil, "\(file)")
    }

    /// Member names that YAML reads otherwise unless they are quoted and
    /// escaped: a null, a boolean, a number, a colon, leading space, a
    /// comment, a deleted character, the line breaks YAML folds.
    @Test func membersYAMLReadsOtherwiseReadBackTheSame() throws {
        let members = ["null", "yes", "1", "a: b", " lead", "#c", "del\u{7F}", "nel\u{85}", "ls\u{2028}", "é"]
        // None needs escaping in JSON, which takes DEL, NEL and LS as they are.
        let objects = (1...3).map { id in
            "{\"id\": \(id), " + members.map { "\"\($0)\": \(id)" }.joined(separator: ", ") + "}"
        }
        let (mapping, _) = try Inferrer.infer(path: TestPaths.file("odd.jsonl", objects.joined(separator: "\n") + "\n"))
        let names = try #require(mapping.entities.first).attributes.map(\.name)
        #expect(names.count == members.count + 1, "\(names)")
        #expect(MappingRoundTrip.problem(mapping) == nil)
    }
}
