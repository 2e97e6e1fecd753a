// Getting started: a mapping written in the code.
import Sluice

let mapping = try Mapping.parse(
    yaml: """
        entities:
          Post:
            records: /posts/row
            key: Id
            attributes: {Id: integer, Title: string, CreationDate: date}
        """)
