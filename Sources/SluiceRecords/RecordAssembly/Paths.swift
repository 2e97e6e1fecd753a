/// The document kind a path addresses.
package enum DocumentKind: String, Sendable {
    case xml, json
}

/// Where records are in a document: a compiled XML element path (`/osm/node`,
/// `*` matches any element name) or JSON path (`$`, `$[*]`, `$.jobs[*]`).
package struct RecordPath: Sendable, Equatable, CustomStringConvertible {
    /// One level of the path.
    package enum Component: Sendable, Equatable {
        /// An element name (XML) or object key (JSON).
        case name([UInt8])
        /// Any element name (XML `*`).
        case anyName
        /// Any element of an array (JSON `[*]`).
        case anyIndex
    }

    /// XML or JSON.
    package let kind: DocumentKind
    /// The levels below the document (XML: starting with the root element;
    /// JSON: below the top-level value, so `$` has none).
    package let components: [Component]
    /// The path as written.
    package let description: String

    /// Parses `text`; returns `nil` with `problem` set when it is malformed.
    package static func parse(_ text: String) -> Result<RecordPath, PathProblem> {
        if text.hasPrefix("/") {
            let parts = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty }) else {
                return .failure(PathProblem("XML record path \"\(text)\" has an empty step"))
            }
            let components = parts.map { $0 == "*" ? Component.anyName : .name(Array($0.utf8)) }
            return .success(RecordPath(kind: .xml, components: components, description: text))
        }
        if text.hasPrefix("$") {
            var components: [Component] = []
            var rest = Substring(text.dropFirst())
            while !rest.isEmpty {
                if rest.hasPrefix("[*]") {
                    components.append(.anyIndex)
                    rest = rest.dropFirst(3)
                } else if rest.hasPrefix(".") {
                    rest = rest.dropFirst()
                    let name = rest.prefix { $0 != "." && $0 != "[" }
                    guard !name.isEmpty else {
                        return .failure(PathProblem("JSON record path \"\(text)\" has an empty key"))
                    }
                    components.append(.name(Array(name.utf8)))
                    rest = rest.dropFirst(name.count)
                } else {
                    return .failure(
                        PathProblem(
                            "JSON record path \"\(text)\" is not of the form $, $[*], $.key, $.key[*]"))
                }
            }
            return .success(RecordPath(kind: .json, components: components, description: text))
        }
        return .failure(
            PathProblem(
                "record path \"\(text)\" must start with / (XML elements) or $ (JSON)"))
    }
}

/// A path into a record: how an attribute finds its source field.
///
/// XML: `@Id` (an attribute of the record element), `title` (a child
/// element's text), `revision/contributor/username`, `revision/@id`, `.` (the
/// record element's own text). JSON: `id`, `actor.login`, `tags[0]`,
/// `payload.commits[2].sha`, `.` (the record value itself).
package struct FieldPath: Sendable, Equatable, CustomStringConvertible {
    /// One step.
    package enum Step: Sendable, Equatable {
        /// A child element (XML) or object member (JSON) of this name.
        case child([UInt8])
        /// An XML attribute.
        case attribute([UInt8])
        /// The n-th element of an array (0-based).
        case index(Int)
        /// Every child element (XML) or array element (JSON) of this name:
        /// the path then gathers all matches (`nd[*]/@ref`, `tags[*]`).
        case each([UInt8])
    }

    /// Whether the path gathers several values (it has a `[*]` step).
    package let gathers: Bool

    /// The steps from the record's root.
    package let steps: [Step]
    /// The path as written.
    package let description: String

    init(steps: [Step], description: String) {
        self.steps = steps
        self.description = description
        gathers = steps.contains { if case .each = $0 { return true } else { return false } }
    }

    /// Parses `text` in the syntax of `kind`.
    package static func parse(_ text: String, kind: DocumentKind) -> Result<FieldPath, PathProblem> {
        if text == "." { return .success(FieldPath(steps: [], description: text)) }
        guard !text.isEmpty else { return .failure(PathProblem("a source path is empty")) }
        var steps: [Step] = []
        switch kind {
        case .xml:
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() {
                if part.hasPrefix("@") {
                    guard index == parts.count - 1, part.count > 1 else {
                        return .failure(PathProblem("XML source \"\(text)\": an @attribute must be the last step"))
                    }
                    steps.append(.attribute(Array(part.dropFirst().utf8)))
                } else if part.isEmpty {
                    return .failure(PathProblem("XML source \"\(text)\" has an empty step"))
                } else if part.hasSuffix("[*]") && part.count > 3 {
                    steps.append(.each(Array(part.dropLast(3).utf8)))
                } else {
                    steps.append(.child(Array(part.utf8)))
                }
            }
        case .json:
            var rest = Substring(text)
            while !rest.isEmpty {
                if rest.hasPrefix("[*]") {
                    guard case .child(let name) = steps.popLast() else {
                        return .failure(PathProblem("JSON source \"\(text)\": [*] must follow a key"))
                    }
                    steps.append(.each(name))
                    rest = rest.dropFirst(3)
                    if rest.hasPrefix(".") { rest = rest.dropFirst() }
                } else if rest.hasPrefix("[") {
                    guard let close = rest.firstIndex(of: "]"),
                        let index = Int(rest[rest.index(after: rest.startIndex)..<close]),
                        index >= 0
                    else { return .failure(PathProblem("JSON source \"\(text)\" has a malformed [index]")) }
                    steps.append(.index(index))
                    rest = rest[rest.index(after: close)...]
                    if rest.hasPrefix(".") { rest = rest.dropFirst() }
                } else {
                    let name = rest.prefix { $0 != "." && $0 != "[" }
                    guard !name.isEmpty else {
                        return .failure(PathProblem("JSON source \"\(text)\" has an empty key"))
                    }
                    steps.append(.child(Array(name.utf8)))
                    rest = rest.dropFirst(name.count)
                    if rest.hasPrefix(".") {
                        rest = rest.dropFirst()
                        if rest.isEmpty { return .failure(PathProblem("JSON source \"\(text)\" ends with a dot")) }
                    }
                }
            }
        }
        if steps.filter({ if case .each = $0 { return true } else { return false } }).count > 1 {
            return .failure(PathProblem("source \"\(text)\" may have one [*] step"))
        }
        return .success(FieldPath(steps: steps, description: text))
    }
}

/// Why a path could not be parsed.
package struct PathProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message.
    package let description: String
    init(_ description: String) { self.description = description }
}
