"""Which buffers are training configs: an editor hands the server every TOML, YAML and JSON file it
opens (`pyproject.toml`, CI workflows, Kubernetes manifests), and those get nothing from it.

A buffer is a config when a family was found for it (detected, or named by a directive, the
project configuration or the client's settings), when a `# trainspec:` directive speaks for it,
or when a `[[configs]]` glob of the project configuration governing it matches it. A buffer the
check could not claim and nothing names is left alone: no diagnostic, hover or fix.
"""

from __future__ import annotations

from trainspec.read.directives import Directives, read_directives
from trainspec.read.project import find_project
from trainspec.spec.errors import TrainspecError
from trainspec.spec.formats import format_of
from trainspec.spec.result import Outcome, Result


def is_config(file: str, text: str, result: Result) -> bool:
    """Whether `result`, the check of `text` as `file`, is about a training config (see above)."""
    if result.outcome is not Outcome.UNCLAIMED:
        return True
    comment = format_of(file).comment
    directives, problems = read_directives(file, text, comment) if comment is not None else (Directives(), [])
    if directives != Directives() or problems:
        return True
    try:
        project = find_project(file)
    except (TrainspecError, OSError):
        return True  # an unusable project configuration: let its diagnostics through
    return project is not None and project.entry_for(file) is not None
