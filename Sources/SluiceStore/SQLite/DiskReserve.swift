#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file of spare bytes beside the store, written when a run starts and
/// removed when it ends: when the disk fills mid-run, removing it first
/// leaves room to record the failure in the ledger (in WAL mode even an
/// update of one row needs a new frame; without the reserve a run on a full
/// disk stayed `running`).
struct DiskReserve {
    /// The reserve's size: a ledger update writes a few pages into the WAL.
    static let bytes = 1 << 20
    let path: String

    /// The reserve of the store at `storePath`, `<store>-sluice-reserve`.
    init(storePath: String) { path = storePath + "-sluice-reserve" }

    /// Writes the reserve; a disk already too full for it is not an error
    /// here (the run will say so itself).
    func create() {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let zeros = [UInt8](repeating: 0, count: 64 << 10)
        var written = 0
        while written < Self.bytes {
            let count = zeros.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            written += count
        }
        _ = fsync(descriptor)
    }

    /// Frees the reserve's bytes.
    func remove() { _ = unlink(path) }
}
