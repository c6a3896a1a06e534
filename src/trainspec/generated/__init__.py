"""Typed models generated from the canonical schemas by tools/generate_models.py; never edited by hand.

In an installed wheel the modules sit beside this file. In a source
checkout they stay in the repository's `generated/` folder, which is added
to this package's search path, so `trainspec.generated.kempnerforge` works
in both.
"""

from trainspec.spec.resources import generated_source_dir

_source = generated_source_dir()
if _source is not None:
    __path__.append(str(_source))
