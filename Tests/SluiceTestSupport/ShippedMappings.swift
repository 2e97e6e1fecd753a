import Foundation

/// Every mapping the repository ships, as text with the place it is at:
/// the mapping files (`Examples/`, `Benchmarks/`), the YAML blocks of the
/// Markdown documentation, and the mappings written as string literals in
/// the tests, the benchmark package, the fuzzer and the library example.
/// Blocks and literals are taken when they start with `entities:`; some
/// are deliberately wrong or incomplete, so a caller keeps those that load.
public enum ShippedMappings {
    /// One mapping's text and where it is (`path` or `path:line`).
    public struct Text: Sendable, CustomStringConvertible {
        /// The file, and the line for a block or literal.
        public let place: String
        /// The mapping's YAML.
        public let yaml: String

        public var description: String { place }
    }

    /// The mapping files: `.yml` and `.yaml` under `Examples/` and `Benchmarks/`.
    public static func files() -> [Text] {
        paths(under: ["Examples", "Benchmarks"], extensions: ["yml", "yaml"]).compactMap { path in
            (try? String(contentsOfFile: absolute(path), encoding: .utf8)).map { Text(place: path, yaml: $0) }
        }
    }

    /// The fenced YAML blocks of every Markdown file that start with `entities:`.
    public static func markdownBlocks() -> [Text] {
        var found: [Text] = []
        for path in paths(under: ["."], extensions: ["md"]) {
            guard let text = try? String(contentsOfFile: absolute(path), encoding: .utf8) else { continue }
            var block: (line: Int, lines: [String])?
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                if let open = block {
                    if line.trimmingCharacters(in: .whitespaces) == "```" {
                        let yaml = open.lines.joined(separator: "\n") + "\n"
                        if yaml.hasPrefix("entities:") { found.append(Text(place: "\(path):\(open.line)", yaml: yaml)) }
                        block = nil
                    } else {
                        block?.lines.append(line)
                    }
                } else if line.hasPrefix("```yaml") || line.hasPrefix("```yml") {
                    block = (number + 1, [])
                }
            }
        }
        return found
    }

    /// The string literals that start with `entities:` in the Swift files
    /// of the tests, the benchmark package, the fuzzer and the library
    /// example: multi-line literals (their indentation removed as Swift
    /// does) and one-line literals. Literals with interpolations or
    /// escapes other than `\"` and `\\` are left out.
    public static func swiftLiterals() -> [Text] {
        var found: [Text] = []
        let folders = ["Tests", "Benchmarks/Benchmarks", "Fuzz", "Examples/Library"]
        for path in paths(under: folders, extensions: ["swift"]) {
            guard let text = try? String(contentsOfFile: absolute(path), encoding: .utf8) else { continue }
            let lines = text.components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                let line = lines[index]
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                let quotes = "\"\"\""
                let opens = trimmed.hasSuffix(quotes) && !trimmed.hasPrefix(quotes) || trimmed == quotes
                if opens && index + 1 < lines.count {
                    let raw = trimmed.hasSuffix("#" + quotes)
                    guard
                        let close = lines[(index + 1)...].firstIndex(where: {
                            $0.trimmingCharacters(in: .whitespaces).hasPrefix(quotes)
                        })
                    else { break }
                    let margin = lines[close].prefix { $0 == " " }.count
                    let body = lines[(index + 1)..<close].map { line in
                        String(line.dropFirst(min(margin, line.prefix { $0 == " " }.count)))
                    }
                    let yaml = body.joined(separator: "\n") + "\n"
                    if yaml.hasPrefix("entities:"), let unescaped = unescape(yaml, raw: raw) {
                        found.append(Text(place: "\(path):\(index + 2)", yaml: unescaped))
                    }
                    index = close + 1
                    continue
                }
                found += oneLineLiterals(line).map { Text(place: "\(path):\(index + 1)", yaml: $0) }
                index += 1
            }
        }
        return found
    }

    /// The literals `"entities: …"` on one line of Swift.
    static func oneLineLiterals(_ line: String) -> [String] {
        var found: [String] = []
        var rest = Substring(line)
        while let start = rest.range(of: "\"entities:") {
            var index = rest.index(after: start.lowerBound)
            var literal = ""
            var closed = false
            while index < rest.endIndex {
                let character = rest[index]
                index = rest.index(after: index)
                if character == "\"" {
                    closed = true
                    break
                }
                literal.append(character)
                if character == "\\", index < rest.endIndex {
                    literal.append(rest[index])
                    index = rest.index(after: index)
                }
            }
            guard closed else { break }
            if let unescaped = unescape(literal, raw: false) { found.append(unescaped) }
            rest = rest[index...]
        }
        return found
    }

    /// `literal` with `\"` and `\\` resolved; `nil` when it has any other
    /// escape (an interpolation among them). Raw literals are returned as
    /// they are unless they interpolate (`\#(`).
    static func unescape(_ literal: String, raw: Bool) -> String? {
        if raw { return literal.contains("\\#(") ? nil : literal }
        var out = ""
        var escaped = false
        for character in literal {
            if escaped {
                guard character == "\"" || character == "\\" else { return nil }
                out.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The repository-relative paths of the files under `folders` whose
    /// names end with one of `extensions`, sorted, leaving out build
    /// folders and the test corpora.
    static func paths(under folders: [String], extensions: Set<String>) -> [String] {
        var found: [String] = []
        for folder in folders {
            let root = folder == "." ? TestPaths.repository : TestPaths.repository.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let url as URL in walker {
                let relative = String(url.path.dropFirst(TestPaths.repository.path.count + 1))
                if url.lastPathComponent.hasPrefix(".") || relative.hasPrefix("Tests/Corpora") {
                    walker.skipDescendants()
                    continue
                }
                if extensions.contains(url.pathExtension) { found.append(relative) }
            }
        }
        return found.sorted()
    }

    static func absolute(_ path: String) -> String { TestPaths.repository.appendingPathComponent(path).path }
}
