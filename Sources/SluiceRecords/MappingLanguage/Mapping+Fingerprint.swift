extension Mapping {
    /// The mapping without where it came from: no file name and no line
    /// numbers (which move with comments and blank lines). Two mappings that
    /// do the same are equal after this, and a mapping written by
    /// `yaml(comment:)` reads back equal to it (the text `fingerprint`
    /// hashes leaves the origin out too). O(mapping size).
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
    /// that the mapping changed since the interrupted run, and a digest set
    /// so that a changed mapping parses every record. 64-bit FNV-1a of the
    /// mapping as `yaml()` writes it: every setting, without file name or
    /// line numbers, read back as the same mapping (so two mappings with one
    /// text do the same). O(mapping size), twice a run: compiling the sync
    /// tests' mapping, fingerprint included, takes 0.43 M instructions,
    /// where hashing the reflected description (until 0.1.0) took 8 M, a
    /// sixth of a small run's CPU both times (callgrind).
    package var fingerprint: String { Self.fingerprint(of: yaml()) }

    /// 64-bit FNV-1a of `text`'s UTF-8 bytes, as 16 hex digits.
    package static func fingerprint(of text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
