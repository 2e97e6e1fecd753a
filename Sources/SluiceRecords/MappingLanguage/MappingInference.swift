import SluiceParsers

/// Reads parser events of a sample of an input and proposes a mapping: where
/// the records are, their fields with guessed types, and a key.
///
/// XML: the repeated children of the root element are the records (else the
/// most frequent element); their attributes, leaf descendants (up to three
/// levels) and repeated children (gathered into JSON) are the fields. JSON:
/// each top-level value (JSON Lines), the elements of a top-level array, or
/// of the largest array of objects in a top-level object; scalar members
/// (and those of small nested objects, by dotted path) are the fields.
/// Memory: statistics per distinct path, plus up to 200,000 distinct values
/// per key candidate.
package final class MappingInference: XMLEventHandler, JSONEventHandler {
    private let maxDepth = 6
    // XML
    private var elementStack: [(path: String, childCounts: [String: Int], hadChildren: Bool)] = []
    private var elementCounts: [String: Int] = [:]
    private var maxPerParent: [String: Int] = [:]
    private var hasChildElements: Set<String> = []
    private var attributeNames: [String: [String]] = [:]
    private var text: [UInt8] = []
    // JSON
    private var containers: [(path: String, isArray: Bool, key: String?, keys: Set<String>)] = []
    private var topLevelValues = 0
    private var valueCounts: [String: Int] = [:]
    private var objectKeys: [String: Set<String>] = [:]
    private var childOrder: [String: [String]] = [:]
    // Both
    private var fields: [String: FieldStatistics] = [:]

    /// An empty collector.
    package init() {}

    // MARK: - XML events

    package func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {
        let elementName = name.string
        let parentPath = elementStack.last?.path ?? ""
        let path = parentPath + "/" + elementName
        if !elementStack.isEmpty {
            elementStack[elementStack.count - 1].childCounts[elementName, default: 0] += 1
            elementStack[elementStack.count - 1].hadChildren = true
            remember(child: path, of: parentPath)
        }
        elementCounts[path, default: 0] += 1
        for attribute in attributes {
            let attributeName = attribute.name.string
            if !(attributeNames[path]?.contains(attributeName) ?? false) {
                attributeNames[path, default: []].append(attributeName)
            }
            fields[path + "/@" + attributeName, default: FieldStatistics()]
                .add(text: Array(attribute.value)[...], isNumber: false, isBoolean: false)
        }
        elementStack.append((path, [:], false))
        text.removeAll(keepingCapacity: true)
    }

    package func endElement() throws {
        guard let frame = elementStack.popLast() else { return }
        for (child, count) in frame.childCounts {
            let childPath = frame.path + "/" + child
            maxPerParent[childPath] = max(maxPerParent[childPath] ?? 0, count)
        }
        if frame.hadChildren {
            hasChildElements.insert(frame.path)
        } else if elementStack.count >= 2 {
            fields[frame.path, default: FieldStatistics()].add(text: text[...], isNumber: false, isBoolean: false)
        }
        text.removeAll(keepingCapacity: true)
    }

    package func characters(_ chunk: ByteSpan) throws {
        if text.count < 4096 { text.append(contentsOf: chunk.prefix(4096 - text.count)) }
    }

    // MARK: - JSON events

    package func startObject() throws { try startValue(isContainer: true, isArray: false) }
    package func startArray() throws { try startValue(isContainer: true, isArray: true) }

    package func key(_ name: ByteSpan) throws {
        guard !containers.isEmpty else { return }
        let key = name.string
        containers[containers.count - 1].key = key
        containers[containers.count - 1].keys.insert(key)
    }

    package func endObject() throws { endContainer() }
    package func endArray() throws { endContainer() }

    package func scalar(_ kind: JSONScalarKind, _ text: ByteSpan) throws {
        let path = valuePath()
        try startValue(isContainer: false, isArray: false)
        guard containers.count <= maxDepth else { return }
        var statistics = fields[path] ?? FieldStatistics()
        if kind == .null {
            statistics.present += 1
            statistics.nulls += 1
        } else {
            let bytes: ArraySlice<UInt8> =
                kind == .true ? Array("true".utf8)[...] : kind == .false ? Array("false".utf8)[...] : Array(text)[...]
            statistics.add(text: bytes, isNumber: kind == .number, isBoolean: kind == .true || kind == .false)
        }
        fields[path] = statistics
    }

    private func valuePath() -> String {
        guard let parent = containers.last else { return "$" }
        return parent.isArray ? parent.path + "[*]" : parent.path + "." + (parent.key ?? "")
    }

    private func startValue(isContainer: Bool, isArray: Bool) throws {
        if containers.isEmpty { topLevelValues += 1 }
        let path = valuePath()
        valueCounts[path, default: 0] += 1
        if let parent = containers.last, !parent.isArray { remember(child: path, of: parent.path) }
        guard isContainer else { return }
        if containers.count <= maxDepth {
            if isArray {
                fields[path, default: FieldStatistics()].arrays += 1
            } else {
                fields[path, default: FieldStatistics()].objects += 1
            }
            fields[path]!.present += 1
        }
        containers.append((path, isArray, nil, []))
    }

    private func endContainer() {
        guard let frame = containers.popLast(), !frame.isArray else { return }
        objectKeys[frame.path, default: []].formUnion(frame.keys)
    }

    private func remember(child: String, of parent: String) {
        if !(childOrder[parent]?.contains(child) ?? false) { childOrder[parent, default: []].append(child) }
    }

    // MARK: - Proposing

    /// The mapping the sample suggests for a `kind` document.
    package func proposal(for kind: DocumentKind) -> Mapping {
        kind == .xml ? xmlProposal() : jsonProposal()
    }

    private func xmlProposal() -> Mapping {
        guard let root = elementCounts.keys.first(where: { $0.split(separator: "/").count == 1 }) else {
            return Mapping(entities: [])
        }
        var recordPaths: [String] = []
        for child in childOrder[root] ?? [] where (elementCounts[child] ?? 0) >= 2 {
            let grandchildren = childOrder[child] ?? []
            let isGroup =
                (attributeNames[child] ?? []).isEmpty && !grandchildren.isEmpty
                && grandchildren.allSatisfy { hasChildElements.contains($0) || !(attributeNames[$0] ?? []).isEmpty }
                && grandchildren.contains { (maxPerParent[$0] ?? 0) > 1 }
            if !isGroup {
                recordPaths.append(child)
                continue
            }
            // A grouping element (osmChange's create/modify/delete): its
            // children are the records, whichever group holds them.
            for grandchild in grandchildren {
                let wildcard = root + "/*/" + (grandchild.split(separator: "/").last ?? "")
                if !recordPaths.contains(wildcard) { recordPaths.append(wildcard) }
            }
        }
        if recordPaths.isEmpty {
            recordPaths = elementCounts.filter { $0.key != root }.max { $0.value < $1.value }.map { [$0.key] } ?? [root]
        }
        mergeWildcards(recordPaths)
        var names: Set<String> = []
        let entities = recordPaths.map { path -> EntityMapping in
            let records = elementCounts[path] ?? 0
            var attributes: [AttributeMapping] = []
            var used: Set<String> = []
            func add(
                _ name: String, _ type: AttributeType, _ source: String, items: AttributeType? = nil,
                object: (String, String)? = nil
            ) {
                var column = Self.columnName(name)
                while !used.insert(column.lowercased()).inserted { column += "_" }
                var attribute = AttributeMapping(name: column, type: type, sources: column == source ? [] : [source])
                if column == source.dropFirst() && source.hasPrefix("@") { attribute.sources = [] }
                attribute.items = items
                attribute.objectKey = object?.0
                attribute.objectValue = object?.1
                attributes.append(attribute)
            }
            for attribute in attributeNames[path] ?? [] {
                add(attribute, fields[path + "/@" + attribute]?.guessedType ?? .string, "@" + attribute)
            }
            addXMLChildren(of: path, relative: "", depth: 1, add: add)
            let key = proposeKey(attributes, records: records) { attribute in
                if let source = attribute.sources.first { return self.fields[path + "/" + source] }
                return self.fields[path + "/@" + attribute.name] ?? self.fields[path + "/" + attribute.name]
            }
            var name = Self.entityName(path)
            while !names.insert(name.lowercased()).inserted { name += "_" }
            return EntityMapping(name: name, records: [path], key: key, attributes: attributes)
        }
        return Mapping(entities: entities)
    }

    /// Folds the statistics of every concrete path a `/root/*/name` record
    /// path covers into entries under the wildcard path.
    private func mergeWildcards(_ recordPaths: [String]) {
        for wildcard in recordPaths where wildcard.contains("/*/") {
            let parts = wildcard.split(separator: "/", omittingEmptySubsequences: false)
            let prefix = parts[..<2].joined(separator: "/") + "/"
            let name = "/" + parts[3]
            let concrete = elementCounts.keys.filter {
                $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).split(separator: "/").count >= 2
                    && $0.dropFirst(prefix.count).drop(while: { $0 != "/" }).hasPrefix(name)
            }
            for path in concrete {
                let rest = path.dropFirst(prefix.count).drop(while: { $0 != "/" })
                let target = String(wildcard.dropLast(name.count)) + rest
                elementCounts[target, default: 0] += elementCounts[path] ?? 0
                maxPerParent[target] = max(maxPerParent[target] ?? 0, maxPerParent[path] ?? 0)
                if hasChildElements.contains(path) { hasChildElements.insert(target) }
                for attribute in attributeNames[path] ?? []
                where !(attributeNames[target]?.contains(attribute) ?? false) {
                    attributeNames[target, default: []].append(attribute)
                }
                for child in childOrder[path] ?? [] {
                    let mapped = target + child.dropFirst(path.count)
                    if !(childOrder[target]?.contains(mapped) ?? false) {
                        childOrder[target, default: []].append(mapped)
                    }
                }
            }
            for (fieldPath, statistics) in fields {
                guard let path = concrete.first(where: { fieldPath.hasPrefix($0 + "/") }) else { continue }
                let rest = path.dropFirst(prefix.count).drop(while: { $0 != "/" })
                let target = String(wildcard.dropLast(name.count)) + rest + fieldPath.dropFirst(path.count)
                fields[target] = (fields[target] ?? FieldStatistics()).merged(with: statistics)
            }
        }
    }

    private func addXMLChildren(
        of path: String, relative: String, depth: Int,
        add: (String, AttributeType, String, AttributeType?, (String, String)?) -> Void
    ) {
        for child in childOrder[path] ?? [] {
            let name = String(child.split(separator: "/").last ?? "")
            let source = relative.isEmpty ? name : relative + "/" + name
            let attributes = attributeNames[child] ?? []
            if (maxPerParent[child] ?? 0) > 1 {
                if attributes.count == 2, let key = attributes.first(where: { ["k", "key", "name"].contains($0) }),
                    let value = attributes.first(where: { $0 != key })
                {
                    add(source, .json, source + "[*]", nil, ("@" + key, "@" + value))
                } else if attributes.count == 1 && !hasChildElements.contains(child) {
                    let type = fields[child + "/@" + attributes[0]]?.guessedType ?? .string
                    add(
                        source, .json, source + "[*]/@" + attributes[0],
                        [.integer, .double, .boolean].contains(type) ? type : nil, nil)
                } else {
                    add(source, .json, source + "[*]", nil, nil)
                }
                continue
            }
            for attribute in attributes {
                add(
                    source + "_" + attribute, fields[child + "/@" + attribute]?.guessedType ?? .string,
                    source + "/@" + attribute, nil, nil)
            }
            if hasChildElements.contains(child) {
                if depth < 3 { addXMLChildren(of: child, relative: source, depth: depth + 1, add: add) }
            } else {
                add(source, fields[child]?.guessedType ?? .string, source, nil, nil)
            }
        }
    }

    private func jsonProposal() -> Mapping {
        let recordPath: String
        if topLevelValues > 1 {
            recordPath = "$"
        } else if (fields["$"]?.arrays ?? 0) > 0 {
            recordPath = "$[*]"
        } else {
            let arrays = (childOrder["$"] ?? []).filter { (fields[$0 + "[*]"]?.objects ?? 0) > 0 }
            recordPath =
                arrays.max { (valueCounts[$0 + "[*]"] ?? 0) < (valueCounts[$1 + "[*]"] ?? 0) }.map { $0 + "[*]" } ?? "$"
        }
        let records = valueCounts[recordPath] ?? 0
        var attributes: [AttributeMapping] = []
        var used: Set<String> = []
        func addMembers(of path: String, relative: String, depth: Int) {
            for child in childOrder[path] ?? [] {
                let key = String(child.dropFirst(path.count + 1))
                let source = relative.isEmpty ? key : relative + "." + key
                let statistics = fields[child] ?? FieldStatistics()
                let smallObject =
                    statistics.objects > 0 && statistics.arrays == 0 && (objectKeys[child]?.count ?? 0) <= 12
                if smallObject && depth < 2 {
                    addMembers(of: child, relative: source, depth: depth + 1)
                    continue
                }
                var column = Self.columnName(source)
                while !used.insert(column.lowercased()).inserted { column += "_" }
                attributes.append(
                    AttributeMapping(
                        name: column, type: statistics.guessedType, sources: column == source ? [] : [source]))
            }
        }
        addMembers(of: recordPath, relative: "", depth: 0)
        let key = proposeKey(attributes, records: records) { attribute in
            self.fields[recordPath + "." + (attribute.sources.first ?? attribute.name)]
        }
        let name = recordPath == "$" || recordPath == "$[*]" ? "Record" : Self.entityName(recordPath)
        return Mapping(entities: [EntityMapping(name: name, records: [recordPath], key: key, attributes: attributes)])
    }

    /// An `id`-like attribute whose values were all present and distinct;
    /// else `type` + `id` when that pair is (checked by the caller's import);
    /// else none.
    private func proposeKey(
        _ attributes: [AttributeMapping], records: Int, statistics: (AttributeMapping) -> FieldStatistics?
    ) -> [String] {
        let preferred = attributes.sorted { Self.keyRank($0.name) < Self.keyRank($1.name) }
        for attribute in preferred
        where Self.keyRank(attribute.name) < 3 && ![.json, .double, .boolean].contains(attribute.type) {
            if statistics(attribute)?.isUnique(records: records) == true { return [attribute.name] }
        }
        let id = attributes.first { $0.name.lowercased() == "id" }
        let type = attributes.first { $0.name.lowercased() == "type" }
        if let id, let type, statistics(id)?.present == records, statistics(type)?.present == records {
            return [type.name, id.name]
        }
        return []
    }

    private static func keyRank(_ name: String) -> Int {
        switch name.lowercased() {
        case "id": return 0
        case "key", "uuid", "guid": return 1
        case _ where name.lowercased().hasSuffix("_id") && !name.contains("_"): return 2
        case "name": return 2
        default: return 3
        }
    }

    /// A column name from a source path: `revision/contributor/username` →
    /// `revision_contributor_username`.
    static func columnName(_ source: String) -> String {
        let cleaned = String(source.map { "/.@[]*:-".contains($0) ? "_" : $0 })
        return String(cleaned.drop { $0 == "_" })
    }

    /// An entity name from a record path: `/osm/node` → `Node`,
    /// `/posts/row` → `Post`, `$.jobs[*]` → `Job`.
    static func entityName(_ path: String) -> String {
        let parts = path.split(whereSeparator: { "/.$[]*".contains($0) }).map(String.init)
        var name = parts.last ?? "Record"
        if ["row", "item", "record", "entry", "element"].contains(name.lowercased()), parts.count >= 2 {
            name = parts[parts.count - 2]
        }
        if name.count > 3, name.lowercased().hasSuffix("ies") {
            name = name.dropLast(3) + "y"
        } else if name.count > 1, name.hasSuffix("s"), !name.hasSuffix("ss") {
            name.removeLast()
        }
        return name.prefix(1).uppercased() + name.dropFirst()
    }
}
