import SluiceParsers
import Testing

/// libxml2's own limits reported as limits (issue 17): a huge attribute
/// said "internal error: Huge input lookup" at byte 8.
@Suite struct XMLTokenLimitTests {
    func failure(_ text: String) -> String {
        let parser = XMLPushParser(handler: IgnoringHandler(), name: "big.xml")
        do {
            try Array(text.utf8).withUnsafeBytes { try parser.feed($0) }
            try parser.finish()
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func aHugeAttributeNamesTheLimit() {
        let message = failure("<r><row a=\"" + String(repeating: "x", count: 10_500_000) + "\"/></r>")
        #expect(message.contains("longer than libxml2's limit of 10,000,000 bytes"), "\(message)")
        #expect(!message.contains("internal error"), "\(message)")
    }

    @Test func aHugeNameNamesTheLimit() {
        let message = failure("<r><" + String(repeating: "n", count: 60_000) + "/></r>")
        #expect(message.contains("an XML name is longer than libxml2's limit of 50,000 bytes"), "\(message)")
    }
}
