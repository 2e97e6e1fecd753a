#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one-step sources of an entity (a member, child element or XML
/// attribute of the record itself), found in one pass over the root's
/// children rather than one sibling walk per source. Each name is held as
/// its length and first eight bytes, so most comparisons are two integer
/// tests; longer names finish with `memcmp`.
struct DirectFields: Sendable {
    /// One field: its name's length, first eight bytes (little-endian, zero
    /// padded), where the whole name starts in `names`, and whether it is an
    /// XML attribute. All trivial, so reading one retains nothing.
    private struct Field {
        var length: Int32
        var prefix: UInt64
        var start: Int32
        var attribute: Bool
    }

    private var fields: [Field] = []
    /// The names, back to back.
    private var names: [UInt8] = []
    /// Field indices by a hash of length and prefix, open addressed
    /// (-1: empty), at most half full: a child's name is looked up in one
    /// or two probes instead of compared with every field (the events'
    /// members: 910 → 630 instructions a record and entity, callgrind).
    private var slots: [Int32] = []

    /// No fields yet.
    init() {}

    /// The number of distinct fields.
    var count: Int { fields.count }

    /// The index of the field `path` reads, added if new; `nil` when the path
    /// is not one `child` or `attribute` step. O(fields) at compile time.
    mutating func index(of path: FieldPath) -> Int32? {
        guard path.steps.count == 1 else { return nil }
        let name: [UInt8]
        let attribute: Bool
        switch path.steps[0] {
        case .child(let child): (name, attribute) = (child, false)
        case .attribute(let value): (name, attribute) = (value, true)
        case .index, .each: return nil
        }
        guard !name.isEmpty, name.count <= Int(Int32.max) else { return nil }
        for (index, field) in fields.enumerated()
        where field.attribute == attribute
            && field.length == Int32(name.count)
            && names[Int(field.start)..<(Int(field.start) + name.count)].elementsEqual(name)
        {
            return Int32(index)
        }
        fields.append(
            Field(
                length: Int32(name.count), prefix: Self.prefix(name[...]), start: Int32(names.count),
                attribute: attribute))
        names += name
        var size = 4
        while size < fields.count * 2 { size *= 2 }
        slots = Array(repeating: -1, count: size)
        for (index, field) in fields.enumerated() {
            var slot = Self.slot(length: field.length, prefix: field.prefix, mask: size - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = Int32(index)
        }
        return Int32(fields.count - 1)
    }

    /// The first slot of a name of `length` bytes starting with `prefix`.
    private static func slot(length: Int32, prefix: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: ((prefix ^ UInt64(length) << 56) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
    }

    /// Sets `found[i]` to the first child of `root` that field `i` names, or
    /// -1. O(children × fields) integer tests, no allocation.
    func find(in tree: RecordTree, root: Int32, into found: UnsafeMutableBufferPointer<Int32>) {
        found.initialize(repeating: -1)
        guard !fields.isEmpty else { return }
        tree.nodes.withUnsafeBufferPointer { nodes in
            tree.bytes.withUnsafeBufferPointer { bytes in
                fields.withUnsafeBufferPointer { fields in
                    names.withUnsafeBufferPointer { names in
                        slots.withUnsafeBufferPointer { slots in
                            let mask = slots.count - 1
                            var child = nodes[Int(root)].firstChild
                            while child >= 0 {
                                let current = child
                                let node = nodes[Int(current)]
                                child = node.nextSibling
                                guard node.nameLength > 0 else { continue }
                                let name = UnsafeBufferPointer(
                                    rebasing: bytes[Int(node.nameStart)..<Int(node.nameStart + node.nameLength)])
                                let prefix = Self.prefix(name, in: bytes)
                                let isAttribute = node.kind == .attribute
                                var slot = Self.slot(length: node.nameLength, prefix: prefix, mask: mask)
                                while slots[slot] >= 0 {
                                    let index = Int(slots[slot])
                                    slot = (slot + 1) & mask
                                    let field = fields[index]
                                    guard field.length == node.nameLength, field.prefix == prefix,
                                        field.attribute == isAttribute
                                    else { continue }
                                    if field.length > 8
                                        && memcmp(
                                            name.baseAddress! + 8, names.baseAddress! + Int(field.start) + 8,
                                            Int(field.length) - 8) != 0
                                    {
                                        continue
                                    }
                                    if found[index] < 0 { found[index] = current }
                                    break
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// ``prefix(_:)`` of `name`, a span of `buffer`: one load of eight
    /// bytes when the buffer has them from where the name starts (the
    /// record tree's names are followed by their values), else byte by byte.
    private static func prefix(_ name: UnsafeBufferPointer<UInt8>, in buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let start = name.baseAddress, let end = buffer.baseAddress.map({ $0 + buffer.count }), end - start >= 8
        else { return prefix(name[...]) }
        let word = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
        return name.count >= 8 ? word : word & ((1 << UInt64(8 * name.count)) - 1)
    }

    /// The first eight bytes of `name`, little-endian, zero padded.
    private static func prefix<Bytes: Collection<UInt8>>(_ name: Bytes) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in name.prefix(8) {
            value |= UInt64(byte) << shift
            shift += 8
        }
        return value
    }
}
