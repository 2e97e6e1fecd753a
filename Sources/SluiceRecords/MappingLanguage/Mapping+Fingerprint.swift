extension Mapping {
    /// The mapping without where it came from: no file name and no line
    /// numbers (which move with comments and blank lines). Two mappings that
    /// do the same are equal after this; `fingerprint` hashes it, and a
    /// mapping written by `yaml(comment:)` reads back equal to it.
    /// O(mapping size).
    package var withoutOrigin: Mapping {
        var mapping = self
        mapping.file = nil
        for entity in mapping.entities.indices {
            mapping.entities[entity].line = nil
            for attribute in mapping.entities[entity].attributes.indices {
                mapping.entities[entity].attributes[attribute].line = nil
            }
            for relationship in mapping.entities[entity].relationships.indices {
                mapping.entities[entity].relationships[relationship].line = nil
                for attribute in mapping.entities[entity].relationships[relationship].attributes.indices {
                    mapping.entities[entity].relationships[relationship].attributes[attribute].line = nil
                }
            }
        }
        return mapping
    }

    /// A fingerprint of what the mapping does: equal for mappings that differ
    /// only in where they came from (`withoutOrigin`), different when any
    /// setting differs. The run ledger records it so that a resume can tell
    /// that the mapping changed since the interrupted run. 64-bit FNV-1a of
    /// the mapping's reflected description (the mapping holds arrays and
    /// values only, so the text is the same in every process); O(mapping
    /// size), once a run.
    package var fingerprint: String { Self.fingerprint(of: String(reflecting: withoutOrigin)) }

    /// 64-bit FNV-1a of `text`'s UTF-8 bytes, as 16 hex digits.
    package static func fingerprint(of text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
