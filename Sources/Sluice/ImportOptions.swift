/// Everything that tunes an import; the defaults suit any dump.
public struct ImportOptions: Sendable, Equatable {
    /// Bytes read from disk and fed to the parser at a time.
    public var chunkSize: Int = Input.defaultChunkSize
    /// Batch bounds and queue depth between parser and store.
    public var batch = BatchLimits()
    /// Store tuning (page cache, lookup size).
    public var store = StoreOptions()
    /// Whether rows reach the store in input order, committed as they come,
    /// or sorted by key and applied once the input is read (see
    /// ``ApplyOrder``).
    public var order: ApplyOrder = .key
    /// Memory, directory and fan-in of the key-ordered apply.
    public var sort = SortOptions()
    /// Per-record limits (nesting depth, record size).
    public var limits = RecordLimits()
    /// The input syntax; `nil` guesses it from each input's name, then from
    /// the mapping's record paths.
    public var format: InputFormat?
    /// Continue an interrupted run: each input's records up to its committed
    /// checkpoint are read but not written again. Refused when an input
    /// changed since (size, modification time, first MiB) or is standard
    /// input.
    public var resume = false
    /// Let delete-missing empty an entity of which the run saw no record at
    /// all (by default such an entity is left alone and a warning given).
    public var allowEmptyDelete = false

    /// The defaults.
    public init() {}
}

/// Progress of a running import, reported after each committed batch.
public struct ImportProgress: Sendable, Equatable {
    /// Records read so far, all inputs together.
    public var records: Int
    /// Input bytes read so far (compressed bytes for compressed input).
    public var bytesRead: Int64
    /// Total input bytes when every input's size is known.
    public var bytesTotal: Int64?
    /// Seconds since the import started.
    public var seconds: Double
}

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Records read, all inputs together.
    public var records: Int
    /// Input bytes read (compressed bytes for compressed input).
    public var bytes: Int64
    /// Wall-clock seconds.
    public var seconds: Double
    /// Counts per entity, in mapping order.
    public var entities: [(name: String, counts: EntityCounts)]
    /// Links to records not in the store at the end of the run, per
    /// relationship (`Post.owner`, `Way_nodes`); relationships without any
    /// are left out.
    public var dangling: [String: Int] = [:]
    /// Things the user should know that did not stop the run (for example an
    /// entity delete-missing left alone because the run saw none of it).
    public var warnings: [String] = []

    /// Reports are equal when every count and figure is.
    public static func == (lhs: ImportReport, rhs: ImportReport) -> Bool {
        lhs.records == rhs.records && lhs.bytes == rhs.bytes && lhs.seconds == rhs.seconds
            && lhs.entities.map(\.name) == rhs.entities.map(\.name)
            && lhs.entities.map(\.counts) == rhs.entities.map(\.counts) && lhs.dangling == rhs.dangling
    }

    /// `{"records": N, "bytes": N, "seconds": S, "entities": {"Post":
    /// {"inserted": N, "updated": N, "unchanged": N, "deleted": N, "skipped": N}}}`.
    public var json: String {
        let entities = self.entities.map { name, counts in
            "\(Self.quote(name)): {\"inserted\": \(counts.inserted), \"updated\": \(counts.updated), "
                + "\"unchanged\": \(counts.unchanged), \"deleted\": \(counts.deleted), \"skipped\": \(counts.skipped)}"
        }
        return "{\"records\": \(records), \"bytes\": \(bytes), \"seconds\": \(secondsText), "
            + "\"entities\": {\(entities.joined(separator: ", "))}}"
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
