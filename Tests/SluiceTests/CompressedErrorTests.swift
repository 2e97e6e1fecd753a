import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct CompressedErrorTests {
    @Test func errorsInCompressedInputGiveDecompressedOffsets() throws {
        let plain = TestPaths.file("bad.jsonl", "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3,, }\n")
        let packed = plain + ".gz"
        #expect(try runCommand("/bin/sh", ["-c", "gzip -c '\(plain)' > '\(packed)'"]).status == 0)
        do {
            _ = try Checker.check(path: packed, format: .jsonl)
            Issue.record("malformed compressed input was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.hasPrefix("\(packed):3:"))
            #expect(text.contains("of the decompressed stream"))
        }
    }
}
