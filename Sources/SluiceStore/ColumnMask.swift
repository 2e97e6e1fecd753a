/// A set of column indices: which columns a row mentions, which picks the
/// INSERT or UPDATE statement for it. The first 256 columns (every mapped
/// entity: a mapping has at most 256 attributes) need no allocation; a
/// zero-config table wider than that keeps the rest in an array.
struct ColumnMask: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// Columns from 256 on, 64 a word.
    private var wide: [UInt64] = []

    mutating func insert(_ column: Int) {
        let bit = UInt64(1) << UInt64(column & 63)
        switch column >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        case 3: words.3 |= bit
        case let word:
            while wide.count <= word - 4 { wide.append(0) }
            wide[word - 4] |= bit
        }
    }

    func contains(_ column: Int) -> Bool {
        let bit = UInt64(1) << UInt64(column & 63)
        switch column >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        case 3: return words.3 & bit != 0
        case let word: return word - 4 < wide.count && wide[word - 4] & bit != 0
        }
    }

    static func == (lhs: ColumnMask, rhs: ColumnMask) -> Bool {
        lhs.words == rhs.words && lhs.wide == rhs.wide
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(wide)
    }
}
