import SluiceRecords
import SluiceTestSupport
import Testing

/// Random mappings built from every setting and named with hostile text
/// (`MappingGenerator`), written by `Mapping.yaml` and read back, are the
/// same mappings with the same fingerprint (issue 26).
@Suite struct MappingWriterPropertyTests {
    static let seeds: [UInt64] = Array(1...400)

    @Test func randomMappingsRoundTrip() {
        var failures = 0
        for seed in Self.seeds {
            var generator = MappingGenerator(seed: seed)
            let mapping = generator.mapping()
            if let problem = MappingRoundTrip.problem(mapping) {
                failures += 1
                if failures <= 3 { Issue.record("seed \(seed): \(problem)") }
            }
        }
        #expect(failures == 0, "\(failures) of \(Self.seeds.count) mappings")
    }

    /// The generator reaches every setting of every table and every
    /// hostile text, so that the round trip above covers them.
    @Test func randomMappingsUseEverySettingAndText() {
        var yaml = ""
        var texts: [String] = []
        for seed in Self.seeds {
            var generator = MappingGenerator(seed: seed)
            let mapping = generator.mapping()
            yaml += mapping.yaml()
            texts += Self.texts(mapping)
        }
        let settings =
            EntitySetting.allCases.map(\.rawValue) + AttributeSetting.allCases.map(\.rawValue)
            + RelationshipSetting.allCases.map(\.rawValue) + ["in", "not-in", "exists"]
        for setting in settings {
            #expect(yaml.contains(" \(setting):") || yaml.contains("{\(setting):"), "\(setting)")
        }
        let words =
            AttributeType.allCases.map(\.rawValue) + WriteMode.allCases.map(\.rawValue)
            + MissingTargetPolicy.allCases.map(\.rawValue) + LinkRule.allCases.map(\.rawValue)
            + KeylessRule.allCases.map(\.rawValue)
            // The default unit is not written.
            + EpochUnit.allCases.filter { $0 != AttributeMapping(name: "").epoch }.map(\.rawValue)
        for word in words { #expect(yaml.contains(": \(word)"), "\(word)") }
        for text in MappingGenerator.hostile where !text.isEmpty {
            #expect(texts.contains { $0.contains(text) }, "\(text.debugDescription)")
        }
        #expect(texts.contains(""))
    }

    /// The names, default values and compared texts of `mapping`.
    static func texts(_ mapping: Mapping) -> [String] {
        func compared(_ conditions: [FilterCondition]) -> [String] {
            conditions.flatMap { condition -> [String] in
                switch condition.test {
                case .oneOf(let texts), .noneOf(let texts): texts
                case .exists: []
                }
            }
        }
        var texts: [String] = []
        for entity in mapping.entities {
            texts.append(entity.name)
            texts += entity.attributes.map(\.name) + entity.attributes.compactMap(\.defaultValue)
            texts += entity.relationships.map(\.name) + entity.relationships.flatMap { $0.entities.map(\.value) }
            texts += compared(entity.filter) + compared(entity.deleteWhen)
        }
        return texts
    }
}
