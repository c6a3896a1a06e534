"""Values Axolotl's loader takes in a second spelling and converts before it checks them, as a migration.

The schema names each value once, as the loader ends up with it; written in another spelling the loader
also takes, the value would be refused by the schema although the loader loads it. The migration
rewrites such a value to the name the schema knows, with a warning that says how the loader reads it:
- the TorchAO dtypes of `qat` and `quantization` (`QATConfig.validate_dtype`,
  `PTQConfig.validate_dtype`): `fp8` and `float8` are `float8_e4m3fn`;
- `image_resize_algorithm` (`MultiModalConfig.convert_image_resize_algorithm`): the loader lowercases
  it, so `BILINEAR` is `bilinear`.
A value the loader refuses in every spelling is left for the schema to refuse.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.family import Notice
from trainspec.spec.paths import Path, format_path
from trainspec.spec.wording import show

ALIAS = "loader-alias"
DTYPE_PATHS: tuple[Path, ...] = tuple(
    (section, key) for section in ("qat", "quantization") for key in ("weight_dtype", "activation_dtype")
)
DTYPE_ALIASES = {"fp8": "float8_e4m3fn", "float8": "float8_e4m3fn"}
RESIZE_PATH: Path = ("image_resize_algorithm",)
RESIZE_ALGORITHMS = ("bilinear", "bicubic", "lanczos")


def canonical(path: Path, value: Any) -> str | None:
    """The name the schema knows for `value` at `path`, when the loader reads it as that name; else None."""
    if not isinstance(value, str):
        return None
    if path in DTYPE_PATHS:
        return DTYPE_ALIASES.get(value)
    if path == RESIZE_PATH and value != value.lower() and value.lower() in RESIZE_ALGORITHMS:
        return value.lower()
    return None


def migrate_aliases(doc: Document) -> list[Diagnostic]:
    """The family's Migration: rewrite each aliased value to the schema's name, with a warning at it."""
    out = []
    for path in (*DTYPE_PATHS, RESIZE_PATH):
        *parents, key = path
        node: Any = doc.data
        for part in parents:
            node = node.get(part) if isinstance(node, MutableMapping) else None
        if not isinstance(node, MutableMapping) or key not in node:
            continue
        name = canonical(path, node[key])
        if name is None:
            continue
        message = (
            f"{format_path(path)} = {show(node[key])}: Axolotl reads it as {show(name)}, the name trainspec checks; "
            f"write {show(name)}"
        )
        node[key] = name
        pos = doc.where(path)
        out.append(
            Diagnostic(
                doc.file,
                pos.line if pos else None,
                pos.column if pos else None,
                path,
                ALIAS,
                Severity.WARNING,
                message,
            )
        )
    return out


NOTICES = {
    ALIAS: Notice(
        Severity.WARNING,
        tuple(format_path(p) for p in (*DTYPE_PATHS, RESIZE_PATH)),
        "A value is written in a second spelling that Axolotl's loader converts.\n\n"
        "The loader reads `fp8` and `float8` as the TorchAO dtype `float8_e4m3fn` (under `qat` and\n"
        "`quantization`) and `image_resize_algorithm` in any letter case. trainspec checks the value as\n"
        "the loader reads it and says which name to write; `trainspec migrate FILE` writes it.",
    )
}
"""The migration's id, documented for `trainspec rules` and `explain`."""
