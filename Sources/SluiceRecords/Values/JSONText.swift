/// Writes record-tree nodes as compact JSON text.
///
/// JSON nodes are written as they were; an XML element becomes its text when
/// it has no attributes or child elements, otherwise an object with `@name`
/// members for attributes, members for child elements and `#text` for
/// non-blank text.
enum JSONText {
    /// Appends `node` of `tree` as JSON to `out`. O(subtree).
    static func write(_ tree: RecordTree, _ node: Int32, into out: inout [UInt8]) {
        let entry = tree.nodes[Int(node)]
        switch entry.kind {
        case .null: out.append(contentsOf: "null".utf8)
        case .true: out.append(contentsOf: "true".utf8)
        case .false: out.append(contentsOf: "false".utf8)
        case .number: out.append(contentsOf: tree.value(node))
        case .string, .attribute: quote(tree.value(node), into: &out)
        case .array:
            out.append(UInt8(ascii: "["))
            var first = true
            for child in tree.children(node) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                write(tree, child, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object:
            out.append(UInt8(ascii: "{"))
            var first = true
            for child in tree.children(node) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                quote(tree.name(child), into: &out)
                out.append(UInt8(ascii: ":"))
                write(tree, child, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .element:
            if entry.firstChild < 0 {
                quote(tree.value(node), into: &out)
                return
            }
            out.append(UInt8(ascii: "{"))
            var first = true
            for child in tree.children(node) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                if tree.nodes[Int(child)].kind == .attribute {
                    quote([UInt8(ascii: "@")] + tree.name(child), into: &out)
                } else {
                    quote(tree.name(child), into: &out)
                }
                out.append(UInt8(ascii: ":"))
                write(tree, child, into: &out)
            }
            let text = ValueConversion.trimmed(tree.value(node))
            if !text.isEmpty {
                if !first { out.append(UInt8(ascii: ",")) }
                quote(Array("#text".utf8)[...], into: &out)
                out.append(UInt8(ascii: ":"))
                quote(tree.value(node), into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `text` as a JSON string literal.
    static func quote(_ text: some Collection<UInt8>, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
