/// A deterministic mutation fuzzer's mutations: from a seed input, inputs a
/// byte or a few away, or spliced and cut — the damage real dumps and
/// hostile files carry. Same seed, same cases, so a failure replays.
public struct Mutator {
    private var random: SplitMix
    /// Bytes that change the structure of XML, JSON or YAML when inserted.
    private static let structural: [UInt8] = Array("<>/\"'=&;{}[]:,\\\n\t -#*!?%".utf8) + [0, 0xFF, 0xC3, 0xE2]

    /// A mutator drawing from `seed`.
    public init(seed: UInt64) { random = SplitMix(seed: seed) }

    private mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }

    /// `input` with one to four mutations: a byte flipped, replaced by a
    /// structural byte, inserted or deleted; a run duplicated, moved or
    /// deleted; a piece of `other` spliced in; the end cut off.
    public mutating func mutate(_ input: [UInt8], splicing other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...below(4) {
            let at = below(bytes.count + 1)
            switch below(9) {
            case 0 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] ^= UInt8(1 << below(8))
            case 1 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] = Self.structural[below(Self.structural.count)]
            case 2: bytes.insert(Self.structural[below(Self.structural.count)], at: at)
            case 3 where !bytes.isEmpty: bytes.remove(at: min(at, bytes.count - 1))
            case 4:
                let length = below(min(64, bytes.count - at) + 1)
                bytes.insert(contentsOf: bytes[at..<(at + length)], at: below(bytes.count + 1))
            case 5:
                let length = below(min(256, bytes.count - at) + 1)
                bytes.removeSubrange(at..<(at + length))
            case 6 where !other.isEmpty:
                let start = below(other.count)
                let length = below(min(512, other.count - start) + 1)
                bytes.insert(contentsOf: other[start..<(start + length)], at: at)
            case 7: bytes.removeSubrange(at..<bytes.count)
            default:
                // Deep nesting: the same opening bytes many times over.
                let opener = Self.structural[below(8)]
                bytes.insert(contentsOf: repeatElement(opener, count: 1 + below(2_000)), at: at)
            }
        }
        return bytes
    }
}
