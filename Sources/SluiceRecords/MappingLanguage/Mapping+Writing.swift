extension Mapping {
    /// The mapping as YAML in the format ``parse(yaml:file:)`` reads, with
    /// `comment` as comment lines on top. Every setting the loader reads is
    /// written (those equal to the loader's default are left out), each text
    /// quoted where YAML would read it otherwise, so that reading the text
    /// back gives this mapping again, less its file name and line numbers,
    /// for any mapping the loader returns. O(mapping size).
    public func yaml(comment: String? = nil) -> String {
        var lines: [String] = []
        if let comment {
            lines += comment.split(whereSeparator: \.isNewline).map { "# " + MappingWriter.commentText($0) }
        }
        lines.append(MappingSetting.entities.rawValue + ":")
        for entity in entities {
            lines += MappingWriter.blockPair(entity.name, indent: 2)
            lines += MappingWriter.settings(of: entity)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Writes the parts of a mapping: entities in block style, one setting a
/// line and one attribute or relationship a line, everything inside those
/// in flow style. Each `switch` over a setting table is exhaustive, so a
/// setting added to the loader's table does not compile until it is
/// written too.
enum MappingWriter {
    /// The settings of a new entity, attribute and relationship: what the
    /// loader gives a setting the mapping does not name.
    private static let entityDefaults = EntityMapping(name: "", records: [], key: [], attributes: [])
    private static let attributeDefaults = AttributeMapping(name: "")
    private static let relationshipDefaults = RelationshipMapping(name: "", entity: "", source: "")

    /// An entity's setting lines, below its name.
    static func settings(of entity: EntityMapping) -> [String] {
        var lines: [String] = []
        func line(_ setting: EntitySetting, _ value: String) { lines.append("    \(setting.rawValue): \(value)") }
        for setting in EntitySetting.allCases {
            switch setting {
            case .records: if !entity.records.isEmpty { line(setting, textOrList(entity.records)) }
            case .key: line(setting, textOrList(entity.key))
            case .missingKey:
                if entity.missingKey != entityDefaults.missingKey { line(setting, entity.missingKey.rawValue) }
            case .filter: if !entity.filter.isEmpty { line(setting, conditions(entity.filter)) }
            case .mode: if let mode = entity.mode { line(setting, mode.rawValue) }
            case .overwrite: if let names = entity.overwrite { line(setting, list(names)) }
            case .deleteMissing: if let flag = entity.deleteMissing { line(setting, String(flag)) }
            case .deleteScope: if !entity.deleteScope.isEmpty { line(setting, conditions(entity.deleteScope)) }
            case .deleteScopeParent: if let parent = entity.deleteScopeParent { line(setting, quote(parent)) }
            case .deleteRecords: if !entity.deleteRecords.isEmpty { line(setting, textOrList(entity.deleteRecords)) }
            case .deleteWhen: if !entity.deleteWhen.isEmpty { line(setting, conditions(entity.deleteWhen)) }
            case .attributes:
                lines.append("    \(setting.rawValue):")
                for attribute in entity.attributes {
                    lines += blockPair(attribute.name, value: spec(of: attribute), indent: 6)
                }
            case .relationships:
                guard !entity.relationships.isEmpty else { continue }
                lines.append("    \(setting.rawValue):")
                for relationship in entity.relationships {
                    lines += blockPair(relationship.name, value: spec(of: relationship), indent: 6)
                }
            }
        }
        return lines
    }

    /// An attribute's type name alone, or its settings as a flow mapping.
    static func spec(of attribute: AttributeMapping) -> String {
        var settings: [String] = []
        for setting in AttributeSetting.allCases {
            let value: String?
            switch setting {
            case .type: value = attribute.type.rawValue
            case .source: value = attribute.sources.isEmpty ? nil : textOrList(attribute.sources)
            case .default: value = attribute.defaultValue.map(quote)
            case .invalid:
                value = attribute.onInvalid == attributeDefaults.onInvalid ? nil : attribute.onInvalid.rawValue
            case .formats: value = attribute.formats.isEmpty ? nil : list(attribute.formats)
            case .epoch: value = attribute.epoch == attributeDefaults.epoch ? nil : attribute.epoch.rawValue
            case .items: value = attribute.items?.rawValue
            case .object:
                guard let key = attribute.objectKey, let member = attribute.objectValue else { continue }
                value = flowMapping([
                    (ObjectSetting.key.rawValue, quote(key)), (ObjectSetting.value.rawValue, quote(member)),
                ])
            }
            if let value { settings.append("\(setting.rawValue): \(value)") }
        }
        return settings.count == 1 ? attribute.type.rawValue : "{" + settings.joined(separator: ", ") + "}"
    }

    /// A relationship's settings as a flow mapping.
    static func spec(of relationship: RelationshipMapping) -> String {
        var settings: [String] = []
        for setting in RelationshipSetting.allCases {
            let value: String?
            switch setting {
            case .entity: value = relationship.entity.isEmpty ? nil : quote(relationship.entity)
            case .source: value = quote(relationship.source)
            case .many: value = relationship.many ? "true" : nil
            case .ordered: value = relationship.ordered ? "true" : nil
            case .rule: value = relationship.rule == relationshipDefaults.rule ? nil : relationship.rule.rawValue
            case .missing:
                let given = relationship.missingIsExplicit || relationship.missing != relationshipDefaults.missing
                value = given ? relationship.missing.rawValue : nil
            case .keyless: value = relationship.keyless?.rawValue
            case .key: value = relationship.key.map(quote)
            case .entityBy: value = relationship.entityBy.map(quote)
            case .entities:
                value =
                    relationship.entities.isEmpty
                    ? nil
                    : flowMapping(relationship.entities.map { (quote($0.value), quote($0.entity)) })
            case .attributes:
                value =
                    relationship.attributes.isEmpty
                    ? nil
                    : flowMapping(relationship.attributes.map { (quote($0.name), spec(of: $0)) })
            }
            if let value { settings.append("\(setting.rawValue): \(value)") }
        }
        return "{" + settings.joined(separator: ", ") + "}"
    }

    /// Conditions as a flow mapping from each path to its test.
    static func conditions(_ conditions: [FilterCondition]) -> String {
        flowMapping(
            conditions.map { condition in
                let test: String
                switch condition.test {
                case .oneOf(let texts): test = "\(ConditionTest.in.rawValue): \(list(texts))"
                case .noneOf(let texts): test = "\(ConditionTest.notIn.rawValue): \(list(texts))"
                case .exists(let flag): test = "\(ConditionTest.exists.rawValue): \(flag)"
                }
                return (quote(condition.path), "{\(test)}")
            })
    }

    /// One text alone, or a flow list of any other number.
    static func textOrList(_ texts: [String]) -> String { texts.count == 1 ? quote(texts[0]) : list(texts) }

    /// A flow list of texts.
    static func list(_ texts: [String]) -> String { "[" + texts.map(quote).joined(separator: ", ") + "]" }

    /// The longest quoted key written as an implicit key: YAML reads a key
    /// only within 1,024 characters of its start, so longer ones are written
    /// as explicit keys (`? key`).
    private static let implicitKeyLimit = 1_000

    /// A flow mapping of written keys and values.
    static func flowMapping(_ pairs: [(key: String, value: String)]) -> String {
        let written = pairs.map { pair in
            pair.key.utf8.count > implicitKeyLimit ? "? \(pair.key) : \(pair.value)" : "\(pair.key): \(pair.value)"
        }
        return "{" + written.joined(separator: ", ") + "}"
    }

    /// The lines of `name` as a key of a block mapping, indented by `indent`
    /// spaces, with `value` on the same line (or, without one, a block of
    /// lines indented further to follow).
    static func blockPair(_ name: String, value: String? = nil, indent: Int) -> [String] {
        let margin = String(repeating: " ", count: indent)
        let key = quote(name)
        guard key.utf8.count > implicitKeyLimit else { return [margin + key + ":" + (value.map { " " + $0 } ?? "")] }
        return [margin + "? " + key, margin + ":" + (value.map { " " + $0 } ?? "")]
    }

    /// Words YAML 1.1 reads as booleans or null when plain.
    private static let specialWords: Set<String> = ["true", "false", "yes", "no", "y", "n", "on", "off", "null"]

    /// `text` as a YAML scalar: plain when it is a word YAML reads back as
    /// the same text (letters, digits, `_` and `-`, not starting with a digit
    /// or `-`, not a boolean or null), else double-quoted with every
    /// character that YAML would read otherwise escaped. O(text).
    static func quote(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { scalar in
            guard scalar.isASCII else {
                return isLiteral(scalar) && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil)
            }
            return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        }
        if plain, let first = text.unicodeScalars.first, !("0"..."9").contains(first), first != "-",
            !specialWords.contains(text.lowercased())
        {
            return text
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x100 && !isLiteral(scalar): out += "\\x" + hex(scalar.value, digits: 2)
            case _ where !isLiteral(scalar): out += "\\u" + hex(scalar.value, digits: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Whether YAML reads `scalar` as itself inside a quoted scalar: not a
    /// control character (which YAML refuses), a line break (which it
    /// folds: NEL, the line and paragraph separators) or a byte order mark.
    static func isLiteral(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2028, 0x2029: false
        case 0x20...0x7E, 0xA0...0xD7FF, 0xE000...0xFEFE, 0xFF00...0xFFFD, 0x10000...: true
        default: false
        }
    }

    /// A comment line's text with what a comment cannot hold (control
    /// characters, line breaks, byte order marks) replaced by U+FFFD.
    static func commentText(_ text: Substring) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            out.unicodeScalars.append(isLiteral(scalar) || scalar == "\t" ? scalar : "\u{FFFD}")
        }
        return out
    }

    /// `value` in hexadecimal with at least `digits` digits.
    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
