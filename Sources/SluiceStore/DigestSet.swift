import SluiceRecords

/// The record digests a store keeps so that a later run parses only the
/// units whose bytes changed (docs/record-digests.md): the secret the
/// digests are keyed with, what they were made under, and how many units.
package struct DigestSet: Sendable, Equatable {
    /// The key of ``UnitHasher`` (``UnitHasher/secretBytes`` random bytes,
    /// made with the set and never shown).
    package var secret: [UInt8]
    /// Everything that changes the rows a unit produces (the compiled
    /// mapping, its defaults, the options that decide rows): a run under
    /// another fingerprint parses every unit and remakes the set.
    package var fingerprint: String
    /// False once a run wrote the store without keeping digests: the units
    /// no longer say what the tables hold, and the next run parses all.
    package var valid: Bool
    /// Units kept.
    package var units: Int
    /// The entities whose every row (within their delete scope) a unit of
    /// the set produced, or a run under another fingerprint wrote since and
    /// voided the key of (``VoidedKey``): those the run that saved it swept
    /// (``ImportStore/markCovered(_:)``). A run that skips sweeps them in
    /// proportion to the change: it deletes only keys of the units gone and
    /// keys voided.
    package var covered: Set<String>

    package init(secret: [UInt8], fingerprint: String, valid: Bool, units: Int, covered: Set<String> = []) {
        self.secret = secret
        self.fingerprint = fingerprint
        self.valid = valid
        self.units = units
        self.covered = covered
    }
}
