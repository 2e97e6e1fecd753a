/// What a delete-missing sweep of one entity would delete, counted before
/// it deletes anything (see ``ImportStore/missingRows(_:)``).
package struct MissingRows: Sendable, Equatable {
    /// Stored rows within the entity's delete scope whose keys the run did
    /// not see: the rows the sweep would delete.
    package var missing: Int
    /// Every row the entity's table holds now, this run's inserts included.
    package var stored: Int

    package init(missing: Int, stored: Int) {
        self.missing = missing
        self.stored = stored
    }
}
