/// A set of column indices below 256, without allocation: which columns a
/// row mentions, which picks the INSERT or UPDATE statement for it.
struct ColumnMask: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    mutating func insert(_ column: Int) {
        let bit = UInt64(1) << UInt64(column & 63)
        switch column >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    func contains(_ column: Int) -> Bool {
        let bit = UInt64(1) << UInt64(column & 63)
        switch column >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    static func == (lhs: ColumnMask, rhs: ColumnMask) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
