import SluiceTestSupport
import Testing

@testable import SluiceRecords

/// `DirectFields.find` replaces one `RecordTree.resolve` per one-step source;
/// on any tree it must find the very node `resolve` finds.
@Suite struct DirectFieldsTests {
    /// Names that share lengths and eight-byte prefixes, so every branch of
    /// the comparison is taken.
    static let names = [
        "id", "di", "type", "tags", "created_at", "created_by", "identifier_long_a", "identifier_long_b", "x", "ü",
    ]

    /// Each name as a child step and as an attribute step.
    func paths() throws -> [FieldPath] {
        try Self.names.flatMap { name in
            [try FieldPath.parse(name, kind: .xml).get(), try FieldPath.parse("@" + name, kind: .xml).get()]
        }
    }

    /// A random record root: elements and attributes with names from the
    /// pool (repeats included), some with children of their own.
    func randomTree(_ random: inout SplitMix) -> RecordTree {
        var tree = RecordTree()
        Array("r".utf8).withUnsafeBufferPointer { _ = tree.open(.element, name: $0) }
        for _ in 0..<Int(random.next() % 14) {
            let name = Array(Self.names[Int(random.next() % UInt64(Self.names.count))].utf8)
            name.withUnsafeBufferPointer { name in
                if random.next() % 3 == 0 {
                    tree.open(.attribute, name: name, value: name)
                } else {
                    tree.open(.element, name: name)
                    if random.next() % 4 == 0 {
                        tree.open(.element, name: name)
                        tree.close()
                    }
                    tree.close()
                }
            }
        }
        tree.close()
        return tree
    }

    @Test func findsWhatResolveFindsOnRandomTrees() throws {
        var direct = DirectFields()
        let paths = try paths()
        var fields: [Int32] = []
        for path in paths {
            let field = direct.index(of: path)
            fields.append(try #require(field))
        }
        #expect(direct.count == paths.count)
        #expect(direct.index(of: try FieldPath.parse("a/b", kind: .xml).get()) == nil)
        var random = SplitMix(seed: 3)
        var found = [Int32](repeating: 0, count: direct.count)
        var matches = 0
        for _ in 0..<5_000 {
            let tree = randomTree(&random)
            found.withUnsafeMutableBufferPointer { direct.find(in: tree, root: 0, into: $0) }
            for (path, field) in zip(paths, fields) {
                let expected = tree.resolve(path, from: 0) ?? -1
                #expect(found[Int(field)] == expected, "\(path)")
                if expected >= 0 { matches += 1 }
            }
        }
        #expect(matches > 20_000)
    }
}
