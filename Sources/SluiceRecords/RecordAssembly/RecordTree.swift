import SluiceParsers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The subtree of the record being read, stored flat: nodes in one array,
/// names and values in one byte buffer. Both are reused from record to record,
/// so assembling a record allocates nothing once the buffers have grown.
package struct RecordTree: Sendable {
    /// What a node is.
    package enum Kind: UInt8, Sendable {
        case object, array, string, number, `true`, `false`, null
        /// An XML element; its value is its concatenated text.
        case element
        /// An XML attribute of its parent element.
        case attribute
    }

    /// One node. Names and values are spans of ``bytes``; links are indices
    /// into ``nodes`` (-1 for none).
    package struct Node: Sendable {
        /// What the node is.
        package var kind: Kind
        /// Whether its value is in the ``spill`` file: then `valueStart`
        /// indexes ``spilledStarts`` instead of `bytes`.
        package var spilled = false
        /// Where its name (object key, element or attribute name) starts in `bytes`.
        package var nameStart: Int32
        /// The name's length; 0 for array elements and the root.
        package var nameLength: Int32
        /// Where its value (scalar text, element text) starts in `bytes`.
        package var valueStart: Int32
        /// The value's length.
        package var valueLength: Int32
        /// The enclosing node, -1 for the root.
        package var parent: Int32
        /// The first child, -1 for none.
        package var firstChild: Int32 = -1
        /// The last child, -1 for none (appending is O(1)).
        package var lastChild: Int32 = -1
        /// The next node with the same parent, -1 for none.
        package var nextSibling: Int32 = -1
    }

    /// All nodes; the record's root is node 0.
    package private(set) var nodes: [Node] = []
    /// Names and values.
    package private(set) var bytes: [UInt8] = []
    /// The open container new nodes are added to (-1 before the root).
    private var current: Int32 = -1
    /// The JSON key waiting for its value, as a span of `bytes`.
    private var pendingName: (start: Int32, length: Int32) = (0, 0)
    /// Where values longer than ``ValueSpill/threshold`` go as they
    /// arrive, and the mappers' long values after them; nil when values
    /// stay in memory. Set once by the assembler.
    package var spill: ValueSpill?
    /// Where each spilled value of this record starts in ``spill``.
    package private(set) var spilledStarts: [Int64] = []
    /// The bytes of this record's values in ``spill`` (they count toward
    /// the record limit as if they were held).
    private var spilledBytes = 0

    /// An empty tree.
    package init() {}

    /// True once the root has been closed (or was a scalar).
    package var isComplete: Bool { !nodes.isEmpty && current == -1 }

    /// Memory held by this record, in bytes (checked against the record limit).
    package var byteSize: Int { bytes.count + spilledBytes + nodes.count * MemoryLayout<Node>.stride }

    /// The length of the value written last: the newest scalar or attribute,
    /// or the text of the element being read. O(1).
    package private(set) var lastValueLength = 0

    /// Empties the tree for the next record, keeping its capacity.
    package mutating func reset() {
        nodes.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        spilledStarts.removeAll(keepingCapacity: true)
        spilledBytes = 0
        lastValueLength = 0
        current = -1
        pendingName = (0, 0)
    }

    // MARK: - Building

    /// Remembers the key of the next JSON object member.
    package mutating func setName(_ name: ByteSpan) {
        let start = Int32(bytes.count)
        bytes.append(contentsOf: name)
        pendingName = (start, Int32(name.count))
    }

    /// Adds a node under the current container; containers become current.
    @discardableResult
    package mutating func open(_ kind: Kind, name: ByteSpan? = nil, value: ByteSpan? = nil) -> Int32 {
        var nameSpan = pendingName
        if let name {
            nameSpan = (Int32(bytes.count), Int32(name.count))
            bytes.append(contentsOf: name)
        }
        pendingName = (0, 0)
        var valueSpan: (Int32, Int32) = (Int32(bytes.count), 0)
        var spilled = false
        if let value, value.count > ValueSpill.threshold, let start = spill?.append(UnsafeRawBufferPointer(value)) {
            valueSpan = (Int32(spilledStarts.count), Int32(value.count))
            spilledStarts.append(start)
            spilledBytes += value.count
            spilled = true
        } else if let value, value.count > 0 {
            bytes.append(contentsOf: value)
            valueSpan.1 = Int32(value.count)
        }
        lastValueLength = Int(valueSpan.1)
        let index = Int32(nodes.count)
        nodes.append(
            Node(
                kind: kind, spilled: spilled, nameStart: nameSpan.0, nameLength: nameSpan.1, valueStart: valueSpan.0,
                valueLength: valueSpan.1, parent: current))
        if current >= 0 {
            let parent = Int(current)
            if nodes[parent].lastChild >= 0 {
                nodes[Int(nodes[parent].lastChild)].nextSibling = index
            } else {
                nodes[parent].firstChild = index
            }
            nodes[parent].lastChild = index
        }
        switch kind {
        case .object, .array, .element: current = index
        default: break
        }
        return index
    }

    /// Closes the current container.
    package mutating func close() {
        guard current >= 0 else { return }
        current = nodes[Int(current)].parent
    }

    /// Appends text to the current XML element's value. White space between
    /// child elements is dropped (it is layout, not data); text that resumes
    /// after a child is moved to the end of the buffer once so the value
    /// stays contiguous. The record-size limit bounds what mixed content can
    /// cost.
    package mutating func appendText(_ text: ByteSpan) {
        guard current >= 0 else { return }
        let index = Int(current)
        let node = nodes[index]
        let hasChildElements = node.lastChild >= 0 && nodes[Int(node.lastChild)].kind == .element
        if hasChildElements && text.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return }
        if node.spilled && hasChildElements && spilledIsLayout(node) {
            // White space before a child element, as below for a value in `bytes`.
            nodes[index].spilled = false
            nodes[index].valueStart = Int32(bytes.count)
            nodes[index].valueLength = 0
            return appendText(text)
        }
        if node.spilled && appendSpilledText(text, to: index) { return }
        if node.valueLength > 0 && Int(node.valueStart + node.valueLength) != bytes.count {
            let start = Int(node.valueStart)
            let old = bytes[start..<(start + Int(node.valueLength))]
            if old.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
                nodes[index].valueStart = Int32(bytes.count)
                nodes[index].valueLength = 0
            } else {
                bytes.append(contentsOf: old)
                nodes[index].valueStart = Int32(bytes.count) - node.valueLength
            }
        } else if node.valueLength == 0 {
            nodes[index].valueStart = Int32(bytes.count)
        }
        if spill != nil && Int(nodes[index].valueLength) + text.count > ValueSpill.threshold
            && appendSpilledText(text, to: index)
        {
            return
        }
        bytes.append(contentsOf: text)
        nodes[index].valueLength += Int32(text.count)
        lastValueLength = Int(nodes[index].valueLength)
    }

    /// Appends a piece of the value of the node opened last (a JSON string
    /// that arrives in pieces): to its place in ``spill`` once the value is
    /// longer than ``ValueSpill/threshold``, else (or when the spill cannot
    /// be written, the value read back first) to `bytes`, where that value
    /// was the last written. O(piece); O(value) when the value moves.
    package mutating func appendToLastValue(_ piece: ByteSpan) {
        guard let last = nodes.indices.last else { return }
        let node = nodes[last]
        if spill != nil && (node.spilled || Int(node.valueLength) + piece.count > ValueSpill.threshold)
            && appendSpilledText(piece, to: last)
        {
            return
        }
        if node.spilled {
            let value = spilledValue(node)
            spilledBytes -= value.count
            nodes[last].spilled = false
            nodes[last].valueStart = Int32(bytes.count)
            bytes.append(contentsOf: value)
        }
        bytes.append(contentsOf: piece)
        nodes[last].valueLength += Int32(piece.count)
        lastValueLength = Int(nodes[last].valueLength)
    }

    /// Whether a spilled element text is only white space. O(value).
    private func spilledIsLayout(_ node: Node) -> Bool {
        var layout = true
        let failure = spill?.forEachChunk(from: spilledStarts[Int(node.valueStart)], length: Int(node.valueLength)) {
            layout = $0.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
            return layout
        }
        return failure == nil && layout
    }

    /// Appends a piece of an element's text to its value in ``spill``,
    /// moving the value there first when it is still in `bytes` (and off
    /// the end of `bytes` when it was last), or to the end of the file when
    /// another value was spilled after it (text resuming after a child).
    /// False, with nothing changed, when the spill cannot be written.
    /// O(piece), O(value) when the value moves.
    private mutating func appendSpilledText(_ text: ByteSpan, to index: Int) -> Bool {
        guard let spill else { return false }
        var node = nodes[index]
        if !node.spilled {
            let range = Int(node.valueStart)..<Int(node.valueStart + node.valueLength)
            let moved = bytes.withUnsafeBytes { spill.append(UnsafeRawBufferPointer(rebasing: $0[range])) }
            guard let start = moved else { return false }
            if range.upperBound == bytes.count { bytes.removeLast(range.count) }
            node.spilled = true
            node.valueStart = Int32(spilledStarts.count)
            spilledStarts.append(start)
            spilledBytes += range.count
        } else if spilledStarts[Int(node.valueStart)] + Int64(node.valueLength) != spill.size {
            guard let start = spill.appendCopy(from: spilledStarts[Int(node.valueStart)], length: Int(node.valueLength))
            else { return false }
            spilledStarts[Int(node.valueStart)] = start
            spilledBytes += Int(node.valueLength)
        }
        guard spill.append(UnsafeRawBufferPointer(text)) != nil else { return false }
        node.valueLength += Int32(text.count)
        spilledBytes += text.count
        nodes[index] = node
        lastValueLength = Int(node.valueLength)
        return true
    }

    // MARK: - Reading

    /// Whether the node's name equals `name`.
    package func nameEquals(_ node: Int32, _ name: [UInt8]) -> Bool {
        let entry = nodes[Int(node)]
        guard Int(entry.nameLength) == name.count else { return false }
        let start = Int(entry.nameStart)
        for offset in 0..<name.count where bytes[start + offset] != name[offset] { return false }
        return true
    }

    /// The node's name bytes.
    package func name(_ node: Int32) -> ArraySlice<UInt8> {
        let entry = nodes[Int(node)]
        return bytes[Int(entry.nameStart)..<Int(entry.nameStart + entry.nameLength)]
    }

    /// The node's value bytes (text of strings, numbers, elements, attributes);
    /// a spilled value is read back whole (``spilledValue(_:)``).
    package func value(_ node: Int32) -> ArraySlice<UInt8> {
        let entry = nodes[Int(node)]
        if entry.spilled { return spilledValue(entry)[...] }
        return bytes[Int(entry.valueStart)..<Int(entry.valueStart + entry.valueLength)]
    }

    /// Where a spilled node's value starts in ``spill``; nil for a value
    /// in `bytes`.
    package func spilledStart(_ node: Int32) -> Int64? {
        let entry = nodes[Int(node)]
        return entry.spilled ? spilledStarts[Int(entry.valueStart)] : nil
    }

    /// A spilled value read back whole from ``spill``, for the readers that
    /// need its bytes (a key, a filter, a conversion other than to text). A
    /// read that fails gives zeros and is recorded in the spill
    /// (``ValueSpill/readFailure``), which fails the record. O(value).
    private func spilledValue(_ entry: Node) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(entry.valueLength)) { buffer, count in
            buffer.initialize(repeating: 0)
            spill?.readBack(from: spilledStarts[Int(entry.valueStart)], into: UnsafeMutableRawBufferPointer(buffer))
            count = buffer.count
        }
    }

    /// Calls `body` with the node's value bytes in place (no slice, no
    /// retain of the buffer; a spilled value read back first); valid
    /// during the call only.
    package func withValueBytes<R>(_ node: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let entry = nodes[Int(node)]
        if entry.spilled { return try spilledValue(entry).withUnsafeBytes(body) }
        return try bytes.withUnsafeBytes { all in
            try body(
                UnsafeRawBufferPointer(rebasing: all[Int(entry.valueStart)..<Int(entry.valueStart + entry.valueLength)])
            )
        }
    }

    /// The node's value as source text: `true`/`false` for booleans, the
    /// digits of numbers, the text of strings, elements and attributes.
    package func scalarText(_ node: Int32) -> ArraySlice<UInt8> {
        switch nodes[Int(node)].kind {
        case .true: return Array("true".utf8)[...]
        case .false: return Array("false".utf8)[...]
        default: return value(node)
        }
    }

    /// The children of `node` in order.
    package func children(_ node: Int32) -> ChildSequence {
        ChildSequence(tree: self, first: nodes[Int(node)].firstChild)
    }

    /// The node `path` leads to from the root, or `nil` when the source has
    /// no such field. O(children visited).
    package func resolve(_ path: FieldPath) -> Int32? {
        guard !nodes.isEmpty else { return nil }
        return resolve(path.steps[...], from: 0)
    }

    /// Every node a gathering path (one with a `[*]` step) leads to, in
    /// document order; `nil` when the field before `[*]` is absent.
    package func resolveAll(_ path: FieldPath, from root: Int32 = 0) -> [Int32]? {
        var found: [Int32] = []
        guard forEachGathered(path, from: root, { found.append($0) }) else { return nil }
        return found
    }

    /// Calls `body` with every node a gathering path leads to, in document
    /// order, without collecting them; returns false (calling nothing) when
    /// the field before `[*]` is absent. O(children of the gathered field).
    @discardableResult
    package func forEachGathered<E: Error>(_ path: FieldPath, from root: Int32 = 0, _ body: (Int32) throws(E) -> Void)
        throws(E) -> Bool
    {
        guard !nodes.isEmpty,
            let split = path.steps.firstIndex(where: { if case .each = $0 { return true } else { return false } }),
            case .each(let name) = path.steps[split], let parent = resolve(path.steps[..<split], from: root)
        else { return false }
        let rest = path.steps[(split + 1)...]
        var candidate: Int32
        let elements = nodes[Int(parent)].kind == .element
        if elements {
            candidate = nodes[Int(parent)].firstChild
        } else {
            guard let array = child(of: parent, named: name, attribute: false) else { return false }
            if nodes[Int(array)].kind != .array { return true }
            candidate = nodes[Int(array)].firstChild
        }
        while candidate >= 0 {
            if !elements || (nodes[Int(candidate)].kind == .element && nameEquals(candidate, name)),
                let node = rest.isEmpty ? candidate : resolve(rest, from: candidate)
            {
                try body(node)
            }
            candidate = nodes[Int(candidate)].nextSibling
        }
        return true
    }

    /// The node `path` leads to from `node` (a path relative to it).
    package func resolve(_ path: FieldPath, from node: Int32) -> Int32? {
        resolve(path.steps[...], from: node)
    }

    private func resolve(_ steps: ArraySlice<FieldPath.Step>, from start: Int32) -> Int32? {
        var node = start
        for step in steps {
            let found: Int32?
            switch step {
            case .child(let name): found = child(of: node, named: name, attribute: false)
            case .attribute(let name): found = child(of: node, named: name, attribute: true)
            case .index(let wanted): found = child(of: node, at: wanted)
            case .each: return nil
            }
            guard let found else { return nil }
            node = found
        }
        return node
    }

    /// The first child of `node` named `name` that is an attribute (or,
    /// when `attribute` is false, anything but one). O(children), no copies.
    private func child(of node: Int32, named name: [UInt8], attribute: Bool) -> Int32? {
        nodes.withUnsafeBufferPointer { nodes in
            bytes.withUnsafeBufferPointer { bytes in
                name.withUnsafeBufferPointer { wanted in
                    var child = nodes[Int(node)].firstChild
                    while child >= 0 {
                        let entry = nodes[Int(child)]
                        if (entry.kind == .attribute) == attribute && Int(entry.nameLength) == wanted.count
                            && (wanted.isEmpty
                                || memcmp(bytes.baseAddress! + Int(entry.nameStart), wanted.baseAddress!, wanted.count)
                                    == 0)
                        {
                            return child
                        }
                        child = entry.nextSibling
                    }
                    return nil
                }
            }
        }
    }

    /// The `position`-th child of `node` that is not an attribute. O(position).
    private func child(of node: Int32, at position: Int) -> Int32? {
        nodes.withUnsafeBufferPointer { nodes in
            var child = nodes[Int(node)].firstChild
            var seen = 0
            while child >= 0 {
                if nodes[Int(child)].kind != .attribute {
                    if seen == position { return child }
                    seen += 1
                }
                child = nodes[Int(child)].nextSibling
            }
            return nil
        }
    }

    /// Iterates the children of a node.
    package struct ChildSequence: Sequence, IteratorProtocol {
        let tree: RecordTree
        var upcoming: Int32

        init(tree: RecordTree, first: Int32) {
            self.tree = tree
            upcoming = first
        }

        package mutating func next() -> Int32? {
            guard upcoming >= 0 else { return nil }
            defer { upcoming = tree.nodes[Int(upcoming)].nextSibling }
            return upcoming
        }
    }
}
