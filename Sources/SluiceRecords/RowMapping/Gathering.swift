/// Builds the JSON value of a gathering source (`tag[*]`, `nodes[*]`): an
/// array of the gathered values, or an object from key and value paths.
enum Gathering {
    static func json(
        _ tree: RecordTree, _ nodes: [Int32], items: AttributeType?, object: (key: FieldPath, value: FieldPath)?
    ) -> Result<[UInt8], ConversionProblem> {
        var out: [UInt8] = [object == nil ? UInt8(ascii: "[") : UInt8(ascii: "{")]
        for (position, node) in nodes.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            var valueNode: Int32? = node
            if let object {
                guard let keyNode = tree.resolve(object.key, from: node) else {
                    return .failure(
                        ConversionProblem(description: "a gathered value has no \(object.key) for its name"))
                }
                JSONText.quote(tree.scalarText(keyNode), into: &out)
                out.append(UInt8(ascii: ":"))
                valueNode = tree.resolve(object.value, from: node)
            }
            guard let valueNode else {
                out.append(contentsOf: "null".utf8)
                continue
            }
            switch item(tree, valueNode, items, into: &out) {
            case .success: break
            case .failure(let problem): return .failure(problem)
            }
        }
        out.append(object == nil ? UInt8(ascii: "]") : UInt8(ascii: "}"))
        return .success(out)
    }

    /// Appends one gathered value as JSON, converted to `type` when given.
    private static func item(
        _ tree: RecordTree, _ node: Int32, _ type: AttributeType?, into out: inout [UInt8]
    ) -> Result<Void, ConversionProblem> {
        let kind = tree.nodes[Int(node)].kind
        guard let type, kind != .null, kind != .object, kind != .array else {
            JSONText.write(tree, node, into: &out)
            return .success(())
        }
        let text = ValueConversion.trimmed(tree.scalarText(node))
        switch type {
        case .integer:
            guard let value = ValueConversion.integer(text) else {
                return .failure(
                    ConversionProblem(
                        description: "expected integers, found \"\(String(decoding: text, as: UTF8.self))\""))
            }
            out.append(contentsOf: String(value).utf8)
        case .double, .float, .decimal:
            guard ValueConversion.double(text) != nil,
                let plain = ValueConversion.plainDecimal(text, dropZeroFraction: true)
            else {
                return .failure(
                    ConversionProblem(
                        description: "expected numbers, found \"\(String(decoding: text, as: UTF8.self))\""))
            }
            out.append(contentsOf: plain)
        case .boolean:
            guard let value = ValueConversion.boolean(text) else {
                return .failure(
                    ConversionProblem(
                        description: "expected booleans, found \"\(String(decoding: text, as: UTF8.self))\""))
            }
            out.append(contentsOf: (value ? "true" : "false").utf8)
        default:
            JSONText.quote(tree.scalarText(node), into: &out)
        }
        return .success(())
    }
}
