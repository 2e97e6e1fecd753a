@_spi(Machinery) import SluiceRecords

/// An XML input begun as items for the workers that the scanner cannot cut.
extension ParseSide {
    /// Whether the current input, begun as items for the workers, is XML
    /// that the scanner refuses once its first bytes, `bytes`, show it (in
    /// UTF-16 or UTF-32): it is then begun again to be parsed here, whole,
    /// as when the run has no workers. Before its first bytes only; a copy
    /// of the scanner reads their first two.
    func parsesRefusedHere(_ bytes: UnsafeRawBufferPointer) throws(ImportError) -> Bool {
        guard let split, split.format == .xml, inputBytes == 0, split.pending.isEmpty else { return false }
        var probe = split.scanner
        probe.scan(UnsafeRawBufferPointer(rebasing: bytes.prefix(2))) { _, _ in }
        guard probe.refusal != nil else { return false }
        self.split = nil
        inputsBegun -= 1
        try beginParse(name: split.name, format: split.format, compressed: split.compressed)
        return true
    }
}
