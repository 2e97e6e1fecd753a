import Sluice

/// Writes mappings with `Mapping.yaml` and reads them back, for the tests
/// of the writer.
public enum MappingRoundTrip {
    /// What goes wrong when `mapping` is written and read back, or `nil`
    /// when nothing does: the text must load, give `mapping` again less its
    /// origin (its file name and line numbers, `Mapping.withoutOrigin`) with
    /// the same fingerprint, and be written again as the same text.
    public static func problem(_ mapping: Mapping) -> String? {
        let yaml = mapping.yaml(comment: "written by MappingRoundTrip")
        let reread: Mapping
        do {
            reread = try Mapping.parse(yaml: yaml, file: "written.yml")
        } catch {
            return "the written mapping does not load: \(error)\n\(yaml)"
        }
        if reread.withoutOrigin != mapping.withoutOrigin {
            let difference = difference(mapping.withoutOrigin, reread.withoutOrigin)
            return "it reads back as another mapping: \(difference)\n\(yaml)"
        }
        if reread.fingerprint != mapping.fingerprint {
            return "it reads back with another fingerprint (\(reread.fingerprint), not \(mapping.fingerprint))\n\(yaml)"
        }
        let again = reread.yaml(comment: "written by MappingRoundTrip")
        if again != yaml { return "written again it differs:\n\(yaml)\n---\n\(again)" }
        return nil
    }

    /// The first entity (or the entity lists) in which `written` and
    /// `reread` differ.
    static func difference(_ written: Mapping, _ reread: Mapping) -> String {
        for (before, after) in zip(written.entities, reread.entities) where before != after {
            return "\n  written: \(String(reflecting: before))\n  read:    \(String(reflecting: after))"
        }
        return "the entities are \(written.entities.map(\.name)), read back \(reread.entities.map(\.name))"
    }
}
