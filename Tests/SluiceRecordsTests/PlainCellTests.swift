import Testing

@testable import SluiceRecords

#if canImport(Glibc)
    @_spi(Machinery) import SluiceRecords
    import Glibc
#endif

/// `ValueConversion.plainCell` converts the common values from their bytes
/// in place; whatever it returns must equal what the general conversion
/// stores for the same node and type.
@Suite struct PlainCellTests {
    static let values = [
        "", "12", "-7", "+3", "007", "1.5", "-0.25", "1e3", "12.0", " 12", "9223372036854775807", "9223372036854775808",
        "2024-01-02T03:04:05Z", "2024-01-02 03:04:05", "2024-02-30T00:00:00Z", "2024-01-02T03:04:05+01:00",
        "1388349428",
        "true", "no", "abc", "straße", "0.1", "123456789012345.6", "aGVsbG8=",
    ]
    static let kinds: [RecordTree.Kind] = [.string, .number, .true, .false, .null, .element, .attribute]

    /// The stored form of a cell: its case and, for text, its bytes.
    func stored(_ cell: Cell, _ arena: RowArena) -> String {
        switch cell {
        case .text, .blob:
            return "\(cell)".prefix(4) + ":" + arena.withText(cell) { String(decoding: $0, as: UTF8.self) }
        case .real(let value): return "real:\(value.bitPattern)"
        default: return "\(cell)"
        }
    }

    @Test func agreesWithTheGeneralConversion() {
        var fast = 0
        for value in Self.values {
            for kind in Self.kinds {
                var tree = RecordTree()
                Array(value.utf8).withUnsafeBufferPointer { bytes in
                    Array("v".utf8).withUnsafeBufferPointer { name in _ = tree.open(kind, name: name, value: bytes) }
                }
                if kind == .element { tree.close() }
                for type in AttributeType.allCases {
                    var plainArena = RowArena(columnCount: 1)
                    guard let plain = ValueConversion.plainCell(tree, 0, type, into: &plainArena) else { continue }
                    fast += 1
                    var generalArena = RowArena(columnCount: 1)
                    switch ValueConversion.generalCell(tree, 0, ValueRule(type: type), into: &generalArena) {
                    case .success(let general):
                        #expect(
                            stored(plain, plainArena) == stored(general, generalArena), "\(kind) \(value) as \(type)")
                    case .failure(let problem):
                        Issue.record(
                            "\(kind) \(value) as \(type): fast \(stored(plain, plainArena)), general failed: \(problem)"
                        )
                    }
                }
            }
        }
        #expect(fast > 150)
    }
}
