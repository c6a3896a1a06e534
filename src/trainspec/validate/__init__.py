"""Validating against a family's JSON Schema: the schema itself (`schema`, `fields`), the compiled
validator (`fast`), the validator of record and its errors explained as findings (`schema_walk`,
`explain`), and what the family's loader reads (`dialect`)."""
