import SluiceRecords

/// What decides a run's result, recorded in the ledger when the run starts
/// (``RunRecord/options``): a resume must repeat it, or it would be another
/// run finishing under the interrupted one's name. How a run works (batch and
/// sort sizes, the apply order, the page cache, record limits) is left out:
/// it changes the cost, not the store a run leaves. So is `--max-delete`, a
/// safety limit: a run it refused is resumed with a larger one.
struct RunOptions: Equatable {
    /// One option: its member name in the ledger's JSON, its value there,
    /// and how a user sets it.
    struct Member: Equatable {
        var name: String
        var value: String
        var setting: String
    }

    var members: [Member]

    init(fingerprint: String, options: ImportOptions) {
        members = [
            Member(
                name: "mapping", value: Self.quoted(fingerprint),
                setting: "the mapping (--mapping, or --entity and --key)"),
            Member(name: "mode", value: Self.quoted(options.store.mode.rawValue), setting: "--mode"),
            Member(name: "delete-missing", value: "\(options.store.deleteMissing)", setting: "--delete-missing"),
            Member(name: "allow-empty-delete", value: "\(options.allowEmptyDelete)", setting: "--allow-empty-delete"),
            Member(
                name: "format", value: options.format.map { Self.quoted($0.rawValue) } ?? "null", setting: "--format"),
        ]
    }

    /// `{"mapping": "…", "mode": "upsert", …}`, members in a fixed order.
    var json: String {
        "{" + members.map { "\"\($0.name)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// How `recorded` (the ledger's JSON of an earlier run) differs from
    /// these options, one phrase per option; empty when they agree. Members
    /// a version of sluice did not record are not compared.
    func differences(from recorded: String) -> [String] {
        var earlier: [String: String] = [:]
        for member in recorded.dropFirst().dropLast().split(separator: ",") {
            let parts = member.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: " \"")
            earlier[name] = parts[1].trimmingCharacters(in: " ")
        }
        return members.compactMap { member in
            guard let then = earlier[member.name], then != member.value else { return nil }
            if member.name == "mapping" { return "\(member.setting) changed" }
            return "\(member.setting): \(Self.unquoted(then)) then, \(Self.unquoted(member.value)) now"
        }
    }

    /// The values written are names and hex digits: no escapes needed.
    private static func quoted(_ text: String) -> String { "\"\(text)\"" }
    private static func unquoted(_ text: String) -> String { text.trimmingCharacters(in: "\"") }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String { self[...].trimmingCharacters(in: set) }
}
