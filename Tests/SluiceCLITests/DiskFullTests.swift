import Foundation
import SluiceTestSupport
import Testing

/// A store on a filesystem that fills up mid-import (issue 17): the run
/// must fail cleanly (exit 74, the ledger says failed, the store intact),
/// and a resume once there is room must end in the uninterrupted store. The
/// filesystem is a small tmpfs, which only root can mount.
@Suite(.serialized) struct DiskFullTests {
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = TestPaths.temporaryDirectory().path
        guard (try? runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]))?.status == 0 else {
            return false
        }
        _ = try? runCommand("/bin/umount", [probe])
        return true
    }()

    @Test(.enabled(if: canMount, "mounting a small tmpfs needs root"), arguments: ["input", "key"])
    func aFullDiskFailsCleanlyAndResumesToTheSameStore(order: String) throws {
        let crash = SyncCrashTests()
        let reference = TestPaths.temporaryDirectory().appendingPathComponent("reference.sqlite").path
        let arguments = [
            "import", "--mapping", crash.mapping, "--order", order, "--batch-rows", "2000", SyncCrashTests.all,
        ]
        #expect(try runCommand(sluice, arguments + ["--into", reference]).status == 0)
        let expected = crash.dump(reference)

        let disk = TestPaths.temporaryDirectory().path
        #expect(try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", disk]).status == 0)
        defer { _ = try? runCommand("/bin/umount", [disk]) }
        let store = disk + "/store.sqlite"
        // Sorted runs go beside the test, so that it is the store that fills the disk.
        let sortDir = TestPaths.temporaryDirectory().path
        let full = try runCommand(sluice, arguments + ["--into", store, "--sort-dir", sortDir])
        #expect(full.status == 74, "\(full.stderr)")
        #expect(full.stderr.contains("disk is full"), "\(full.stderr)")
        #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
        #expect(crash.statuses(store).last == "failed", "\(crash.statuses(store))")
        #expect(!FileManager.default.fileExists(atPath: store + "-sluice-reserve"))

        // Room for the store and for the WAL, which grows to
        // StoreOptions.walCheckpointPages (10,000 pages of 4 KiB) between checkpoints.
        #expect(try runCommand("/bin/mount", ["-o", "remount,size=512m", disk]).status == 0)
        let resumed = try runCommand(sluice, arguments + ["--into", store, "--sort-dir", sortDir, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(crash.dump(store) == expected, "the resumed store differs")
        #expect(crash.statuses(store).suffix(2) == ["failed", "completed"], "\(crash.statuses(store))")
    }

    /// Sorted runs beside the store, on the disk that fills (the default):
    /// a spill that fails must leave the ledger `failed`, not `running`.
    @Test(.enabled(if: canMount, "mounting a small tmpfs needs root"))
    func aSpillThatFillsTheStoresDiskIsRecordedAsFailed() throws {
        let crash = SyncCrashTests()
        let disk = TestPaths.temporaryDirectory().path
        #expect(try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk]).status == 0)
        defer { _ = try? runCommand("/bin/umount", [disk]) }
        let store = disk + "/store.sqlite"
        let full = try runCommand(
            sluice, ["import", "--mapping", crash.mapping, "--into", store, "--sort-mib", "1", SyncCrashTests.all])
        #expect(full.status == 74, "\(full.stderr)")
        #expect(crash.statuses(store).last == "failed", "\(crash.statuses(store)): \(full.stderr)")
    }

    /// `sluice status` of a store on a read-only filesystem (issue 17): it
    /// failed with "unable to open database file", as SQLite could not make
    /// the WAL's shared-memory file there.
    @Test(.enabled(if: canMount, "mounting a small tmpfs needs root"))
    func statusReadsAStoreOnAReadOnlyFilesystem() throws {
        let disk = TestPaths.temporaryDirectory().path
        #expect(try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk]).status == 0)
        defer { _ = try? runCommand("/bin/umount", [disk]) }
        let store = disk + "/a store #1.sqlite"
        let input = TestPaths.file("one.jsonl", "{\"id\": 1}\n")
        #expect(try runCommand(sluice, ["import", "--into", store, "--entity", "E", "--key", "id", input]).status == 0)
        #expect(try runCommand("/bin/mount", ["-o", "remount,ro", disk]).status == 0)
        let status = try runCommand(sluice, ["status", store])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("E: 1 rows") && status.stdout.contains("completed"), "\(status.stdout)")
    }
}
