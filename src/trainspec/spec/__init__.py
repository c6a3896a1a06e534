"""What a family may use, and what every stage shares: trainspec's bottom layer.

Documents and the format table, config paths, diagnostics and codes, values in words and text escaped
for each medium, the rule API, devices and the layout space, rule examples, schema access, versions,
results, and the `Family` a family declares. Nothing here imports anything of trainspec above it, so a
family written against these modules alone runs under any engine that reads them.
"""

__version__ = "0.1.0"
