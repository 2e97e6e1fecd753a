/// Which units of each of a run's inputs are parsed, by input and 1-based
/// unit ordinal: a bit each (2,000,000 units, 250 KB).
struct UnitSelection {
    private var bits: [[UInt64]]
    /// Units selected.
    private(set) var count = 0

    /// None selected, of `inputs` inputs.
    init(inputs: Int) { bits = Array(repeating: [], count: inputs) }

    /// Selects unit `ordinal` of input `input`.
    mutating func insert(input: Int, ordinal: Int) {
        let (word, bit) = (ordinal >> 6, UInt64(1) << UInt64(ordinal & 63))
        if bits[input].count <= word { bits[input] += Array(repeating: 0, count: word + 1 - bits[input].count) }
        if bits[input][word] & bit == 0 { count += 1 }
        bits[input][word] |= bit
    }

    /// Whether unit `ordinal` of input `input` is selected.
    func contains(input: Int, ordinal: Int) -> Bool {
        let word = ordinal >> 6
        return word < bits[input].count && bits[input][word] & (UInt64(1) << UInt64(ordinal & 63)) != 0
    }
}
