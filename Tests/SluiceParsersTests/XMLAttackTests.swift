import Foundation
import SluiceParsers
import SluiceTestSupport
import Testing

/// Counts what a document delivers, to bound amplification.
final class ByteCounter: XMLEventHandler {
    var bytes = 0
    func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {
        bytes += name.count + attributes.reduce(0) { $0 + $1.name.count + $1.value.count }
    }
    func endElement() throws {}
    func characters(_ text: ByteSpan) throws { bytes += text.count }
}

/// Files of xml-attacks/ whose correct result is a successful parse: they
/// declare no entity and reference no DTD content (external DTDs are never
/// loaded, so lol_ip_* are just their root elements).
let harmlessAttackFiles: Set<String> = [
    "defusedxml/dtd.xml", "defusedxml/dtd_element.xml", "defusedxml/simple.xml", "defusedxml/simple-ns.xml",
    "libxml2-recurse/lol_ip_content.xml", "libxml2-recurse/lol_ip_value.xml",
]

@Suite struct XMLAttackTests {
    @Test func everyAttackEndsInAClearErrorOrACorrectResultWithoutAmplification() throws {
        let root = TestPaths.corpus("xml-attacks")
        var files: [String] = []
        for folder in ["defusedxml", "libxml2-errors", "libxml2-recurse"] {
            files += try FileManager.default.contentsOfDirectory(atPath: "\(root)/\(folder)").map { "\(folder)/\($0)" }
        }
        #expect(files.count == 65)
        for file in files.sorted() {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(file)"))
            let counter = ByteCounter()
            let parser = XMLPushParser(handler: counter, name: file)
            var failure: ParseError?
            do {
                try [UInt8](data).withUnsafeBytes { try parser.feed($0) }
                try parser.finish()
            } catch let error as ParseError {
                failure = error
            }
            if harmlessAttackFiles.contains(file) {
                #expect(failure == nil, "\(file): \(failure.map { "\($0)" } ?? "")")
            } else {
                #expect(failure != nil, "\(file) was accepted")
                if let failure {
                    #expect(failure.location.file == file && failure.location.line != nil, "\(file): \(failure)")
                }
            }
            // No expansion: the handler never sees more than the file holds.
            #expect(counter.bytes <= data.count, "\(file) delivered \(counter.bytes) bytes from \(data.count)")
        }
    }
}
