import Foundation
import SluiceTestSupport
import Testing

/// An app's package (Tests/Fixtures/App) that depends on this checkout by
/// path, as a user's does: its `App` target builds with `import Sluice`
/// alone, naming every public type, and runs an import; its `Machinery`
/// target, which names the pipeline's machinery, fails to build (issue 29,
/// the public API is only the API). The fixture builds in
/// `.build/app-fixture`, kept between runs: the first build compiles the
/// library again, a few minutes on two cores, so this is one test.
@Suite struct AppPackageTests {
    static let fixture = TestPaths.repository.appendingPathComponent("Tests/Fixtures/App")
    static let scratch = TestPaths.repository.appendingPathComponent(".build/app-fixture")

    /// `swift build` of the fixture with `arguments` (which product or
    /// target), its output and errors.
    static func build(_ arguments: [String]) throws -> CommandResult {
        try runCommand(
            "/usr/bin/env",
            ["swift", "build", "--package-path", fixture.path, "--scratch-path", scratch.path] + arguments)
    }

    @Test func anAppSeesTheAPIAndNotTheMachinery() throws {
        let app = try Self.build(["--product", "App"])
        #expect(app.status == 0, "\(app.stdout)\(app.stderr)")
        let directory = TestPaths.temporaryDirectory()
        let run = try runCommand(Self.scratch.appendingPathComponent("debug/App").path, [directory.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "64 public types; inserted 3; last run completed\n")

        let machinery = try Self.build(["--target", "Machinery"])
        #expect(machinery.status != 0)
        let output = machinery.stdout + machinery.stderr
        let names = [
            "Compression", "Input", "ByteSource", "DecompressingSource", "XMLPushParser", "JSONPushParser",
            "RecordAssembler", "CompiledMapping", "Batcher", "BatchGroup", "KeyOrderSorter", "RowArena", "Cell",
            "ImportStore", "SQLiteStore", "PostgresStore", "StoreTarget", "ImportPipeline",
        ]
        for name in names {
            #expect(output.contains("cannot find '\(name)' in scope"), "\(name): \(output)")
        }
    }

    /// The types the fixture's `App` names (its `surface` list, nested types
    /// left out) are the types the DocC catalog's topics list.
    @Test func theCatalogListsEveryPublicType() throws {
        let app = try String(contentsOf: Self.fixture.appendingPathComponent("Sources/App/main.swift"), encoding: .utf8)
        let surface = app.components(separatedBy: "let surface: [Any.Type] = [")[1].components(separatedBy: "\n]")[0]
        let named = surface.components(separatedBy: ".self").dropLast().compactMap {
            $0.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "." }).last.map(String.init)
        }
        let catalog = try String(
            contentsOf: TestPaths.repository.appendingPathComponent("Sources/Sluice/Sluice.docc/Sluice.md"),
            encoding: .utf8)
        let topics = catalog.components(separatedBy: "## Topics")[1].components(separatedBy: "\n")
            .filter { $0.hasPrefix("- ``") }.map { String($0.dropFirst(4).dropLast(2)) }
        #expect(named.count == 64)
        #expect(Set(named.filter { !$0.contains(".") }) == Set(topics))
        #expect(topics.count == Set(topics).count)
    }
}
