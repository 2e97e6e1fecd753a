import Foundation
import Sluice
import Testing

/// Issue 29, point 3: every entry point throws sluice's typed errors, which
/// read in an app as the CLI's messages do, with their place.
@Suite struct ErrorTests {
    struct DownloadFailed: Error {}

    /// `run(name:format:chunks:)` throws `ImportError` (typed: a
    /// `do throws(ImportError)` needs no cast), the sequence's own error
    /// wrapped in `.source`.
    @Test func aFailingSourceIsAnImportError() async throws {
        let store = temporaryDirectory().appendingPathComponent("s.sqlite").path
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            continuation.yield(Array("{\"id\": 1, \"name\": \"one\"}\n".utf8))
            continuation.finish(throwing: DownloadFailed())
        }
        let importer = try importer(store, order: .input)
        do throws(ImportError) {
            _ = try await importer.run(name: "download", format: .jsonl, chunks: chunks)
            Issue.record("the run did not fail")
        } catch {
            let typed: ImportError = error
            guard case .source(let name, let cause) = typed else {
                Issue.record("not the source's error: \(typed)")
                return
            }
            #expect(name == "download" && cause is DownloadFailed)
            #expect(typed.localizedDescription.hasPrefix("download: the input's source failed: "))
        }
        #expect(try lastRun(store) == .failed)
    }

    /// `run(name:format:bytes:)` throws `ImportError` too, a parse error
    /// with its place, as `localizedDescription` gives it.
    @Test func aParseErrorReadsLikeTheCLI() async throws {
        let store = temporaryDirectory().appendingPathComponent("s.sqlite").path
        let bytes = AsyncStream<UInt8> { continuation in
            for byte in "{\"id\": 1, \"name\": \"one\"}\n{\"id\": 2,\n".utf8 { continuation.yield(byte) }
            continuation.finish()
        }
        let importer = try importer(store, order: .input)
        do throws(ImportError) {
            _ = try await importer.run(name: "feed.jsonl", format: .jsonl, bytes: bytes)
            Issue.record("the run did not fail")
        } catch {
            let typed: ImportError = error
            guard case .parse = typed else {
                Issue.record("not a parse error: \(typed)")
                return
            }
            #expect(typed.localizedDescription == "\(typed)")
            #expect(typed.localizedDescription.hasPrefix("feed.jsonl:"))
        }
    }

    /// The mapping's errors name their line, in `localizedDescription` too.
    @Test func aMappingErrorNamesItsLine() {
        do throws(MappingError) {
            _ = try Mapping.parse(
                yaml: "entities:\n  Event:\n    records: $\n    key: id\n    attributes: {id: integr}\n",
                file: "mapping.yml")
            Issue.record("the mapping was accepted")
        } catch {
            let typed: MappingError = error
            #expect(typed.localizedDescription == "\(typed)")
            #expect(typed.localizedDescription.hasPrefix("mapping.yml:5: "), "\(typed.localizedDescription)")
        }
    }

    /// A store that cannot be opened says why, as the operating system does.
    @Test func aStoreThatCannotBeOpenedGivesTheReason() throws {
        let directory = temporaryDirectory()
        let input = try events(1...3, in: directory)
        let store = directory.appendingPathComponent("missing/s.sqlite").path
        let importer = try importer(store)
        do throws(ImportError) {
            _ = try importer.runBlocking(inputs: [input])
            Issue.record("the store opened")
        } catch {
            guard case .store(let failure) = error else {
                Issue.record("not a store error: \(error)")
                return
            }
            #expect(failure.cause == .cannotOpen)
            #expect(error.localizedDescription.contains("No such file or directory"), "\(error.localizedDescription)")
        }
    }
}
