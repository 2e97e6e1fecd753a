import Foundation
import SluiceTestSupport

/// The `sluice` binary the tests run (``TestPaths/builtProduct(_:)``: the
/// release build under scripts/test.sh, the debug one under `swift test`).
let sluice = TestPaths.builtProduct("sluice")

/// The bytes `sluice` with `arguments` read (`rchar` of `/proc`, its
/// store's included), run as the child of a shell that prints its own
/// counts once it has reaped it; and the command's exit status.
func bytesRead(_ arguments: [String]) throws -> (status: Int32, read: Int) {
    let command = ([sluice] + arguments).map { "'\($0)'" }.joined(separator: " ")
    let script = "\(command) >/dev/null 2>&1; s=$?; grep '^rchar' /proc/$$/io; exit $s"
    let result = try runCommand("/bin/sh", ["-c", script])
    let read = result.stdout.split(separator: " ").last.flatMap {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    return (result.status, read ?? -1)
}
