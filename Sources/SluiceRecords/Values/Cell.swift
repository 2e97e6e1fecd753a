// Cell and RowArena are the hottest types that cross modules (the batcher,
// the sorter and the store read every cell). They are `@_spi(Machinery)
// public` rather than `package`: Swift's default cross-module optimisation
// inlines public code only, and with `package` the 20,000-event import ran
// 2,894 M instructions against 2,769 M (callgrind, +4.5%); a user's code
// still does not see them without `@_spi(Machinery) import SluiceRecords`.
/// One value of a row, typed for the store. Text lives in the ``RowArena``'s
/// byte buffer, so a cell never allocates.
@_spi(Machinery) public enum Cell: Equatable, Sendable {
    /// The source did not mention the field: an update leaves the stored value
    /// alone and an insert takes the column's default.
    case absent
    /// An explicit null.
    case null
    /// A 64-bit integer (also booleans, as 0 and 1).
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text at `offset` in the arena's bytes.
    case text(offset: Int32, length: Int32)
    /// Bytes at `offset` in the arena's bytes, stored as a BLOB.
    case blob(offset: Int32, length: Int32)
    /// UTF-8 text of `length` bytes in the arena's ``ValueSpill``, whose
    /// offset in that file is the 8 bytes at `descriptor` in the arena's
    /// bytes (``RowArena/spilledOffset(_:)``). Never a key or a link.
    case spilledText(descriptor: Int32, length: Int32)
    /// Bytes of `length` in the arena's ``ValueSpill``, stored as a BLOB;
    /// placed as ``spilledText(descriptor:length:)`` is.
    case spilledBlob(descriptor: Int32, length: Int32)
}
