import Foundation
import SluiceRecords
import SluiceTestSupport
import Testing

/// The lists of mapping-language words in README.md and docs/mapping.md are
/// the keyword tables the loader reads (issue 26): README had listed a type
/// `base64` the loader refuses and left out `float`.
@Suite struct MappingKeywordDocsTests {
    /// The file at `path` in the repository, its line breaks made spaces
    /// when `joined` (a list in backticks may be broken across lines).
    static func read(_ path: String, joined: Bool = false) throws -> String {
        let text = try String(contentsOf: TestPaths.repository.appendingPathComponent(path), encoding: .utf8)
        return joined ? text.replacingOccurrences(of: "\n", with: " ") : text
    }

    /// The words in backticks in `text`, in order.
    static func quoted(_ text: some StringProtocol) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    /// The text of `markdown` from `start` to the first full stop that ends
    /// a sentence outside parentheses.
    static func sentence(in markdown: String, from start: String) throws -> String {
        let begin = try #require(markdown.range(of: start)).lowerBound
        var depth = 0
        var sentence = ""
        for character in markdown[begin...] {
            if character == "(" { depth += 1 } else if character == ")" { depth -= 1 }
            if character == "." && depth == 0 { break }
            sentence.append(character)
        }
        return sentence
    }

    /// The lines of `markdown` from the heading `heading` to the next heading.
    static func section(in markdown: String, heading: String) throws -> String {
        let lines = markdown.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "\(heading)")
        return lines[(start + 1)...].prefix { !$0.hasPrefix("#") }.joined(separator: "\n")
    }

    /// The rows of the first table after the heading `heading` in
    /// `markdown`, each as its cells.
    static func table(in markdown: String, after heading: String) throws -> [[String]] {
        let lines = markdown.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "\(heading)")
        let rows = lines[start...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
        return rows.map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map(String.init)
        }
    }

    @Test func readmeListsTheAttributeTypes() throws {
        let sentence = try Self.sentence(in: Self.read("README.md", joined: true), from: "Types: ")
        #expect(Self.quoted(sentence) == AttributeType.allCases.map(\.rawValue))
    }

    @Test func readmeListsTheWriteModes() throws {
        let modes = try #require(Self.quoted(Self.read("README.md", joined: true)).first { $0.hasPrefix("mode: ") })
        #expect(modes.dropFirst("mode: ".count).components(separatedBy: " | ") == WriteMode.allCases.map(\.rawValue))
    }

    @Test func referenceTablesListEverySetting() throws {
        let reference = try Self.read("docs/mapping.md")
        let tables: [(heading: String, words: [String])] = [
            ("## Entities", EntitySetting.allCases.map(\.rawValue)),
            ("## Attributes", AttributeSetting.allCases.map(\.rawValue)),
            ("## Relationships", RelationshipSetting.allCases.map(\.rawValue)),
            ("## Types", AttributeType.allCases.map(\.rawValue)),
        ]
        for (heading, words) in tables {
            let documented = try Self.table(in: reference, after: heading).flatMap { Self.quoted($0[0]) }
            #expect(documented.sorted() == words.sorted(), "\(heading)")
        }
    }

    @Test func referenceListsTheTypesAKeyCannotHave() throws {
        let sentence = try Self.sentence(in: Self.read("docs/mapping.md", joined: true), from: "Keys cannot be ")
        #expect(Self.quoted(sentence) == AttributeType.unkeyable.map(\.rawValue))
    }

    /// Each setting whose value is a word of a table names every word of it.
    @Test func referenceTablesListEveryValue() throws {
        let reference = try Self.read("docs/mapping.md")
        let rows: [(heading: String, setting: String, words: [String])] = [
            ("## Entities", EntitySetting.missingKey.rawValue, MissingKeyPolicy.allCases.map(\.rawValue)),
            ("## Entities", EntitySetting.mode.rawValue, WriteMode.allCases.map(\.rawValue)),
            ("## Attributes", AttributeSetting.invalid.rawValue, InvalidValuePolicy.allCases.map(\.rawValue)),
            ("## Attributes", AttributeSetting.epoch.rawValue, EpochUnit.allCases.map(\.rawValue)),
            ("## Relationships", RelationshipSetting.rule.rawValue, LinkRule.allCases.map(\.rawValue)),
            ("## Relationships", RelationshipSetting.missing.rawValue, MissingTargetPolicy.allCases.map(\.rawValue)),
            ("## Relationships", RelationshipSetting.keyless.rawValue, KeylessRule.allCases.map(\.rawValue)),
        ]
        for (heading, setting, words) in rows {
            let row = try #require(Self.table(in: reference, after: heading).first { Self.quoted($0[0]) == [setting] })
            let meaning = Set(Self.quoted(row[1]))
            for word in words { #expect(meaning.contains(word), "\(setting): \(word)") }
        }
        let filters = try Self.section(in: reference, heading: "### Filters")
        for test in ConditionTest.allCases {
            let named = filters.contains("{\(test.rawValue): ") || filters.contains("`\(test.rawValue)`")
            #expect(named, "\(test.rawValue)")
        }
    }
}
