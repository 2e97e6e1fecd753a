import Foundation
import SluiceTestSupport
import Testing

/// Every Swift sample in README.md, docs/mapping.md, the DocC articles and
/// the doc comments under `Sources/` (DocC shows them on the symbols' pages)
/// is the shown part of a file in `Snippets/`, which `swift build` compiles
/// (issue 29, documentation that compiles): a sample edited in the docs
/// alone, or a snippet changed without its sample, fails here.
@Suite struct DocumentationSnippetTests {
    /// The markdown files whose Swift samples must be snippets.
    static let documents: [String] = {
        let catalog = "Sources/Sluice/Sluice.docc"
        let articles =
            (try? FileManager.default.contentsOfDirectory(
                atPath: TestPaths.repository.appendingPathComponent(catalog).path)) ?? []
        return ["README.md", "docs/mapping.md"]
            + articles.filter { $0.hasSuffix(".md") }.sorted().map {
                "\(catalog)/\($0)"
            }
    }()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestPaths.repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The Swift files under `Sources/`, relative to the repository.
    static let sources: [String] = {
        let root = TestPaths.repository.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.sorted().map { "Sources/\($0)" }
    }()

    /// The text of the doc comments of a Swift file, each line without its
    /// indentation and `/// `, as DocC reads it.
    static func docComments(in swift: String) -> String {
        swift.components(separatedBy: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("///") else { return nil }
            let text = trimmed.dropFirst(3)
            return String(text.hasPrefix(" ") ? text.dropFirst() : text)
        }.joined(separator: "\n")
    }

    /// The Swift samples of every document and doc comment, with where each is.
    static func samples() throws -> [(place: String, code: String)] {
        let documented = try documents.flatMap { document in
            swiftBlocks(in: try read(document)).map { (place: document, code: $0) }
        }
        let commented = try sources.flatMap { source in
            swiftBlocks(in: docComments(in: try read(source))).map { (place: source, code: $0) }
        }
        return documented + commented
    }

    /// The code of each ```swift block in `markdown`.
    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [String]?
        for line in markdown.components(separatedBy: "\n") {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current?.joined(separator: "\n") ?? "")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// What the documentation shows of a snippet: its lines after the
    /// leading description comment, without the regions between
    /// `// snippet.hide` and `// snippet.show`, blank lines trimmed at
    /// both ends (SwiftPM's and DocC's reading of a snippet).
    static func shown(_ snippet: String) -> String {
        let lines = snippet.components(separatedBy: "\n")
        let isMarker = { (line: String) in line == "// snippet.hide" || line == "// snippet.show" }
        var hidden = false
        var shown: [String] = []
        for line in lines.drop(while: { $0.hasPrefix("//") && !isMarker($0) }) {
            if line == "// snippet.hide" {
                hidden = true
            } else if line == "// snippet.show" {
                hidden = false
            } else if !hidden {
                shown.append(line)
            }
        }
        let trimmed = shown.drop { $0.isEmpty }.reversed().drop { $0.isEmpty }.reversed()
        return trimmed.joined(separator: "\n")
    }

    /// The snippets by file name, as the documentation shows them.
    static func snippets() throws -> [String: String] {
        let directory = TestPaths.repository.appendingPathComponent("Snippets")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        var snippets: [String: String] = [:]
        for name in names { snippets[name] = shown(try read("Snippets/\(name)")) }
        return snippets
    }

    @Test func everySwiftSampleIsASnippet() throws {
        let snippets = try Self.snippets()
        let samples = try Self.samples()
        for sample in samples {
            #expect(
                snippets.values.contains(sample.code),
                "\(sample.place): a Swift sample that is no snippet:\n\(sample.code)")
        }
        #expect(samples.count >= 9)
    }

    @Test func everySnippetIsShown() throws {
        let samples = try Self.samples().map(\.code)
        for (name, code) in try Self.snippets() {
            #expect(samples.contains(code), "Snippets/\(name) is shown in no document")
        }
    }

    @Test func theShownPartLeavesOutTheDescriptionAndHiddenLines() {
        let snippet =
            "// What it shows.\n// snippet.hide\nimport A\n// snippet.show\n\nlet a = 1\n// snippet.hide\nb()\n"
        #expect(Self.shown(snippet) == "let a = 1")
    }
}
