/// What a store with a page cache of its own (SQLite) says of the pages its
/// transactions write, for the key-ordered apply to cut batches whose
/// pages fit that cache (`ImportStore.pageWrites()`).
package struct PageWrites: Sendable, Equatable {
    /// Pages the store's page cache holds.
    package var cachePages: Int
    /// Pages written to the journal since the store opened, a page written
    /// again counted again: a transaction adds the pages it dirtied, and
    /// more when its dirty pages overflowed the cache and were spilled and
    /// written again.
    package var written: Int

    /// The cache of `cachePages` pages, `written` pages so far.
    package init(cachePages: Int, written: Int) {
        self.cachePages = cachePages
        self.written = written
    }
}
