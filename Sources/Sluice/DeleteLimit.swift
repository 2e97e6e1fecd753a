/// The most rows delete-missing may take from one entity in a run
/// (``ImportOptions/maxDelete``): a number of rows, or a percentage of the
/// rows the entity's table holds when the sweep begins. A run that would
/// delete more from any entity is refused before its first deletion.
public enum DeleteLimit: Sendable, Equatable, CustomStringConvertible {
    /// At most this many rows (0 or more).
    case rows(Int)
    /// At most this percentage (0 to 100) of the stored rows.
    case percent(Double)

    /// Reads `N` (rows) or `P%` (a percentage, decimals allowed); nil for
    /// anything else, a negative value or a percentage above 100.
    public init?(_ text: String) {
        if text.hasSuffix("%") {
            guard let value = Double(text.dropLast()), value.isFinite, (0...100).contains(value) else { return nil }
            self = .percent(value)
        } else {
            guard let value = Int(text), value >= 0 else { return nil }
            self = .rows(value)
        }
    }

    /// Whether deleting `missing` of `stored` rows stays within the limit.
    public func allows(deleting missing: Int, of stored: Int) -> Bool {
        switch self {
        case .rows(let limit): return missing <= limit
        case .percent(let limit): return Double(missing) * 100 <= limit * Double(stored)
        }
    }

    /// `N` or `P%`, as ``init(_:)`` reads it.
    public var description: String {
        switch self {
        case .rows(let limit): return "\(limit)"
        case .percent(let limit): return limit == limit.rounded() ? "\(Int(limit))%" : "\(limit)%"
        }
    }
}
