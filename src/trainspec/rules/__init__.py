"""Running rules: a family's rules on a resolved config, where each finding points, and the catalogue of every id.

The rule API a family writes against (`Rule`, `rule`, `Context`) is `trainspec.spec.rules`.
"""
