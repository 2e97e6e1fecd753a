import Foundation
import SluiceInput
import SluiceTestSupport
import Testing

/// Reads a whole source with chunks of `chunk` bytes.
func readAll(_ source: ByteSource, chunk: Int = 65_536) throws -> [UInt8] {
    var out: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
    defer { buffer.deallocate() }
    while true {
        let count = try source.read(into: buffer)
        if count == 0 { return out }
        out.append(contentsOf: buffer[..<count])
    }
}

func writeTemporary(_ data: Data, _ name: String) -> String {
    let url = TestPaths.temporaryDirectory().appendingPathComponent(name)
    _ = FileManager.default.createFile(atPath: url.path, contents: data)
    return url.path
}

/// Runs a tool and returns its raw standard output.
func toolOutput(_ tool: String, _ arguments: [String], input: Data) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    let out = Pipe()
    let inPipe = Pipe()
    process.standardOutput = out
    process.standardInput = inPipe
    try process.run()
    DispatchQueue.global().async {
        inPipe.fileHandleForWriting.write(input)
        try? inPipe.fileHandleForWriting.close()
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}

@Suite struct CompressionTests {
    let plain = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })

    @Test func detectsMagicBytes() {
        func detect(_ bytes: [UInt8]) -> Compression { bytes.withUnsafeBytes { Compression.detect($0) } }
        #expect(detect([0x1F, 0x8B, 8]) == .gzip)
        #expect(detect(Array("BZh9".utf8)) == .bzip2)
        #expect(detect([0x28, 0xB5, 0x2F, 0xFD]) == .zstd)
        #expect(detect([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) == .xz)
        #expect(detect(Array("<xml".utf8)) == .none)
        #expect(detect([0x1F]) == .none)
    }

    @Test(arguments: [("gzip", Compression.gzip), ("bzip2", .bzip2), ("zstd", .zstd), ("xz", .xz)])
    func roundTripsEveryFormat(tool: String, format: Compression) throws {
        let compressed = try toolOutput(tool, ["-c"], input: plain)
        let path = writeTemporary(compressed, "data.bin")
        let source = try Input.open(path: path, chunkSize: 4096)
        #expect(source.compression == format)
        for chunk in [1, 7, 65_536] {
            let again = try Input.open(path: path, chunkSize: chunk)
            #expect(try readAll(again, chunk: chunk) == [UInt8](plain))
        }
        #expect(source.totalBytes == Int64(compressed.count))
    }

    @Test(arguments: ["gzip", "bzip2", "zstd", "xz"])
    func readsConcatenatedMembers(tool: String) throws {
        let first = try toolOutput(tool, ["-c"], input: Data("first half\n".utf8))
        let second = try toolOutput(tool, ["-c"], input: Data("second half\n".utf8))
        let path = writeTemporary(first + second, "multi.bin")
        #expect(try readAll(Input.open(path: path)) == Array("first half\nsecond half\n".utf8))
    }

    @Test(arguments: ["gzip", "bzip2", "zstd", "xz"])
    func truncatedStreamIsAnError(tool: String) throws {
        let compressed = try toolOutput(tool, ["-c"], input: plain)
        for cut in [compressed.count / 3, compressed.count / 2, compressed.count - 1] {
            let path = writeTemporary(compressed.prefix(cut), "cut.bin")
            #expect(throws: InputError.self) { try readAll(Input.open(path: path)) }
        }
    }

    @Test func corruptStreamNamesFileAndOffset() throws {
        var compressed = try toolOutput("gzip", ["-c"], input: plain)
        compressed[compressed.count / 2] ^= 0xFF
        compressed[compressed.count / 2 + 1] ^= 0xFF
        let path = writeTemporary(compressed, "bad.gz")
        do {
            _ = try readAll(Input.open(path: path))
            Issue.record("a corrupt stream was read without error")
        } catch let error as InputError {
            #expect("\(error)".contains(path))
            #expect("\(error)".contains("compressed byte") || "\(error)".contains("truncated"))
        }
    }

    @Test func plainFileAndMissingFile() throws {
        let path = writeTemporary(Data("hello".utf8), "plain.txt")
        #expect(try readAll(Input.open(path: path, chunkSize: 1), chunk: 1) == Array("hello".utf8))
        #expect(throws: InputError.notFound(path: "/nonexistent/file.xml")) {
            try Input.open(path: "/nonexistent/file.xml")
        }
    }
}
