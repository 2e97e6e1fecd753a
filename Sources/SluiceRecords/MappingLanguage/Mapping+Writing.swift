extension Mapping {
    /// The mapping as YAML in the format ``parse(yaml:file:)`` reads, with a
    /// comment line on top. O(mapping size).
    public func yaml(comment: String? = nil) -> String {
        var lines: [String] = []
        if let comment { lines += comment.split(separator: "\n").map { "# " + $0 } }
        lines.append("entities:")
        for entity in entities {
            lines.append("  \(Self.quote(entity.name)):")
            let records = entity.records.map(Self.quote)
            lines.append("    records: " + (records.count == 1 ? records[0] : "[" + records.joined(separator: ", ") + "]"))
            let keys = entity.key.map(Self.quote)
            lines.append("    key: " + (keys.count == 1 ? keys[0] : "[" + keys.joined(separator: ", ") + "]"))
            if entity.missingKey != .error { lines.append("    missing-key: \(entity.missingKey.rawValue)") }
            lines.append("    attributes:")
            for attribute in entity.attributes {
                var settings: [String] = []
                if !attribute.sources.isEmpty {
                    let sources = attribute.sources.map(Self.quote)
                    settings.append("source: " + (sources.count == 1 ? sources[0] : "[" + sources.joined(separator: ", ") + "]"))
                }
                if let items = attribute.items { settings.append("items: \(items.rawValue)") }
                if let key = attribute.objectKey, let value = attribute.objectValue {
                    settings.append("object: {key: \(Self.quote(key)), value: \(Self.quote(value))}")
                }
                if let value = attribute.defaultValue { settings.append("default: \(Self.quote(value))") }
                if attribute.onInvalid != .error { settings.append("invalid: \(attribute.onInvalid.rawValue)") }
                if !attribute.formats.isEmpty { settings.append("formats: [" + attribute.formats.map(Self.quote).joined(separator: ", ") + "]") }
                if attribute.epoch != .seconds { settings.append("epoch: \(attribute.epoch.rawValue)") }
                let name = Self.quote(attribute.name)
                if settings.isEmpty {
                    lines.append("      \(name): \(attribute.type.rawValue)")
                } else {
                    lines.append("      \(name): {type: \(attribute.type.rawValue), " + settings.joined(separator: ", ") + "}")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a YAML scalar: plain when safe, else double-quoted.
    static func quote(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            && !["true", "false", "yes", "no", "null", "on", "off", "~"].contains(text.lowercased())
            && !(text.first?.isNumber ?? false) && text.first != "-"
        if plain { return text }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += "\\x" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
