import Foundation
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// What `--into` and `sluice status` name, parsed once by ``StoreTarget``.
@Suite struct StoreTargetTests {
    @Test func nullIsTheNullStore() {
        #expect(StoreTarget("null:") == .null)
        #expect(StoreTarget("null:").file == nil)
        #expect(StoreTarget("null:").masked == "null:")
        // Only the exact word: anything longer is a file.
        #expect(StoreTarget("null:x") == .sqlite(path: "null:x"))
        #expect(StoreTarget("./null:") == .sqlite(path: "./null:"))
    }

    @Test(arguments: [
        "postgresql://me:secret@db.example/site", "postgres://db/site", "postgresql:", "postgres:",
        "postgresql:///site?host=/run/postgresql",
    ])
    func uris(_ text: String) {
        #expect(StoreTarget(text) == .postgres(conninfo: text))
        #expect(StoreTarget(text).file == nil)
    }

    @Test(arguments: [
        "dbname=site", "host=/tmp dbname=site", "user=me password=secret dbname=site", "service=nightly",
        "hostaddr=127.0.0.1 port=5433", "sslmode=require host=db", "passfile=/p dbname=x", "application_name=sluice",
        "options=-cstatement_timeout=0", "connect_timeout=5 dbname=x", "port=5432", " dbname=site",
    ])
    func keywordConnectionStrings(_ text: String) {
        #expect(StoreTarget(text) == .postgres(conninfo: text))
    }

    @Test(arguments: [
        "store.sqlite", "/var/lib/sluice/store.sqlite", "a store #1.sqlite", "=x", "dbname", "size=big.sqlite",
        "dir/dbname=site", "DBNAME=site", "pg:site", "postgresq://x", "", "sqlite:store",
        "data/null:",
    ])
    func anythingElseIsASQLiteFile(_ text: String) {
        #expect(StoreTarget(text) == .sqlite(path: text))
        #expect(StoreTarget(text).file == text)
        #expect(StoreTarget(text).masked == text)
    }

    @Test func aPasswordIsMaskedForDisplay() {
        #expect(StoreTarget("postgresql://me:secret@db/site").masked == "postgresql://me:***@db/site")
        #expect(StoreTarget("host=db password=secret dbname=site").masked == "host=db password=*** dbname=site")
    }

    @Test func sortedRunsGoBesideAFileAndToTheTemporaryDirectoryOtherwise() {
        #expect(StoreTarget("/data/nightly/store.sqlite").sortDirectory == "/data/nightly")
        #expect(StoreTarget("/store.sqlite").sortDirectory == "/")
        #expect(StoreTarget("store.sqlite").sortDirectory == ".")
        let temporary = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        #expect(StoreTarget("null:").sortDirectory == temporary)
        #expect(StoreTarget("dbname=site").sortDirectory == temporary)
    }

    @Test func theNullStoreOpensAndHasNoStatus() throws {
        #expect(try StoreTarget("null:").open(options: StoreOptions()) is NullStore)
        #expect(throws: StoreError.self) { try StoreTarget("null:").status() }
    }

    @Test func aFileOpensASQLiteStore() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("t.sqlite").path
        #expect(try StoreTarget(path).open(options: StoreOptions()) is SQLiteStore)
        #expect(try StoreTarget(path).status().runs.isEmpty)
    }
}
