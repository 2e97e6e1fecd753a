#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new file in a directory, unlinked as soon as it is made: the scratch
/// file of a run (sort runs, digest runs, spilled values, a spooled stream),
/// which lives as long as its descriptor and which the system reclaims
/// however the process ends. The one place such files are made.
package struct UnlinkedFile {
    /// The open descriptor, or -1 when the file could not be made.
    package let descriptor: Int32
    /// The name the file had (in messages: it is gone from the directory).
    package let path: String
    /// The system's error when `descriptor` is -1, else 0.
    package let error: Int32

    /// Makes a file named `prefix` plus a unique suffix in `directory`
    /// (`mkstemp`) and unlinks it. O(1).
    package init(in directory: String, prefix: String) {
        // mkstemp replaces the template's six trailing X's with a unique suffix.
        var template = Array((directory + "/" + prefix + String(repeating: "X", count: 6)).utf8CString)
        let opened = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let code = opened < 0 ? errno : 0
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if opened >= 0 { unlink(path) }
        descriptor = opened
        error = code
    }
}
