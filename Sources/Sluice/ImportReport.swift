/// What an import did.
public struct ImportReport: Sendable, Equatable, Codable {
    /// An entity's name and what the run wrote to its table.
    public struct Entity: Sendable, Equatable, Codable {
        /// The entity's name, as the mapping has it.
        public var name: String
        /// Its rows inserted, updated, unchanged, deleted and skipped.
        public var counts: EntityCounts

        /// An entity's counts.
        public init(name: String, counts: EntityCounts) {
            self.name = name
            self.counts = counts
        }
    }

    /// Records read, all inputs together.
    public var records: Int
    /// Of ``records``, those not parsed: their bytes are those of records
    /// the last run read, so their rows are as it left them
    /// (docs/record-digests.md; ``ImportOptions/noSkip`` parses them).
    public var unchangedRecords = 0
    /// Input bytes read (compressed bytes for compressed input).
    public var bytes: Int64
    /// Wall-clock seconds.
    public var seconds: Double
    /// Counts per entity, in mapping order.
    public var entities: [Entity]
    /// Links to records not in the store at the end of the run, per
    /// relationship (`Post.owner`, `Way_nodes`); relationships without any
    /// are left out.
    public var dangling: [String: Int] = [:]
    /// Things the user should know that did not stop the run (for example an
    /// entity delete-missing left alone because the run saw none of it).
    public var warnings: [String] = []
    /// Why the run parsed every record though its store keeps record
    /// digests (docs/record-digests.md), when it did: digests are off for
    /// its mapping or options (`record digests are off (Event runs hooks)`),
    /// or the store's set was made under another mapping, sluice version or
    /// options, or is not valid, and the run made it anew. Nil when the run
    /// skipped what it could, when the store had no set (its first run), and
    /// under ``ImportOptions/noSkip``.
    public var fullPass: String?
    /// Every table of the mapping: the entities' tables (with the stub rows
    /// created and the children deleted with their parent) and the link
    /// tables (link rows added and removed), in mapping order.
    public var tables: [TableReport] = []
    /// Whether the run was a dry run (``ImportOptions/dryRun``): every
    /// count is what the run would have written, and nothing was.
    public var dryRun = false
    /// In a dry run, the error the real run would end with after writing
    /// (deletions beyond ``ImportOptions/maxDelete``, dangling references
    /// under `missing: error`); nil when it would succeed.
    public var wouldFail: String?

    /// `{"records": N, "unchangedRecords": N, "bytes": N, "seconds": S, "entities": {"Post":
    /// {"inserted": N, "updated": N, "unchanged": N, "deleted": N, "skipped": N}},
    /// "tables": [{"name": "Post", "kind": "entity", ..., "stubs": N}, ...],
    /// "dangling": {"Post.owner": N}, "warnings": ["..."]}`, members in that
    /// order, then `"fullPass"` when the run gives one, then for a dry run
    /// `"dryRun": true` and `"wouldFail"` (a message or null) (written by
    /// hand: the module does not use Foundation).
    public var json: String {
        let entities = self.entities.map { entity in
            let counts = entity.counts
            return "\(Self.quote(entity.name)): {\"inserted\": \(counts.inserted), \"updated\": \(counts.updated), "
                + "\"unchanged\": \(counts.unchanged), \"deleted\": \(counts.deleted), \"skipped\": \(counts.skipped)}"
        }
        let tables = self.tables.map { table in
            "{\"name\": \(Self.quote(table.name)), \"kind\": \"\(table.kind.rawValue)\", \"inserted\": \(table.inserted), "
                + "\"updated\": \(table.updated), \"unchanged\": \(table.unchanged), \"deleted\": \(table.deleted), "
                + "\"stubs\": \(table.stubs)}"
        }
        let dangling = self.dangling.sorted { $0.key < $1.key }.map { "\(Self.quote($0.key)): \($0.value)" }
        return
            "{\"records\": \(records), \"unchangedRecords\": \(unchangedRecords), \"bytes\": \(bytes), \"seconds\": \(secondsText), "
            + "\"entities\": {\(entities.joined(separator: ", "))}, \"tables\": [\(tables.joined(separator: ", "))], "
            + "\"dangling\": {\(dangling.joined(separator: ", "))}, \"warnings\": [\(warnings.map(Self.quote).joined(separator: ", "))]"
            + (fullPass.map { ", \"fullPass\": \(Self.quote($0))" } ?? "")
            + (dryRun ? ", \"dryRun\": true, \"wouldFail\": \(wouldFail.map(Self.quote) ?? "null")}" : "}")
    }

    /// ``seconds`` with three decimals, e.g. `12.034`.
    public var secondsText: String {
        let millis = Int((seconds * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The counts of the entity called `name`.
    public subscript(entity name: String) -> EntityCounts? {
        entities.first { $0.name == name }?.counts
    }
}

extension ImportReport {
    private enum CodingKeys: String, CodingKey {
        case records, unchangedRecords, bytes, seconds, entities, tables, dangling, warnings, fullPass, dryRun,
            wouldFail
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        records = try container.decode(Int.self, forKey: .records)
        unchangedRecords = try container.decodeIfPresent(Int.self, forKey: .unchangedRecords) ?? 0
        bytes = try container.decode(Int64.self, forKey: .bytes)
        seconds = try container.decode(Double.self, forKey: .seconds)
        entities = try container.decode([Entity].self, forKey: .entities)
        tables = try container.decodeIfPresent([TableReport].self, forKey: .tables) ?? []
        dangling = try container.decodeIfPresent([String: Int].self, forKey: .dangling) ?? [:]
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
        fullPass = try container.decodeIfPresent(String.self, forKey: .fullPass)
        dryRun = try container.decodeIfPresent(Bool.self, forKey: .dryRun) ?? false
        wouldFail = try container.decodeIfPresent(String.self, forKey: .wouldFail)
    }

    /// Encodes ``entities`` as a list of `{"name", "counts"}` (a list keeps
    /// mapping order, which a keyed container does not promise).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(records, forKey: .records)
        try container.encode(unchangedRecords, forKey: .unchangedRecords)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(entities, forKey: .entities)
        try container.encode(tables, forKey: .tables)
        try container.encode(dangling, forKey: .dangling)
        try container.encode(warnings, forKey: .warnings)
        try container.encodeIfPresent(fullPass, forKey: .fullPass)
        if dryRun {
            try container.encode(dryRun, forKey: .dryRun)
            try container.encode(wouldFail, forKey: .wouldFail)
        }
    }
}

/// What a run wrote to one table.
public struct TableReport: Sendable, Equatable, Codable {
    /// An entity's own table, or the link table of a to-many relationship.
    public enum Kind: String, Sendable, Codable {
        case entity, link
    }

    /// The table's name.
    public var name: String
    public var kind: Kind
    /// Rows (for a link table: links) added.
    public var inserted = 0
    /// Rows whose values changed (entities only).
    public var updated = 0
    /// Rows found with the same values (entities only).
    public var unchanged = 0
    /// Rows (for a link table: links) removed: by delete-missing, by a
    /// change file, with the parent that dropped them, or replaced.
    public var deleted = 0
    /// Rows created holding only a key, for links to records not in the
    /// input (`missing: stub`); also counted in ``inserted``.
    public var stubs = 0

    /// A table's report; the counts start at zero.
    public init(
        name: String, kind: Kind, inserted: Int = 0, updated: Int = 0, unchanged: Int = 0, deleted: Int = 0,
        stubs: Int = 0
    ) {
        self.name = name
        self.kind = kind
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.deleted = deleted
        self.stubs = stubs
    }
}
