"""`python -m trainspec`: the command line, with the working directory taken off the import path first.

`python -m` puts the working directory first on `sys.path`, so a `*.dist-info` folder in a checked-out
repository would be an installed package, and its `trainspec.families` entry point code trainspec
runs. The `trainspec` script never had it there; this makes the module the same.
"""

import os
import sys


def _without_working_directory() -> None:
    """Drop the entry `python -m` added for the working directory (`-P`/PYTHONSAFEPATH add none)."""
    if sys.flags.safe_path or not sys.path:
        return
    try:
        here = os.getcwd()
    except OSError:
        here = None
    if sys.path[0] in ("", ".") or (here is not None and os.path.abspath(sys.path[0]) == here):
        del sys.path[0]


_without_working_directory()

from trainspec.cli import main  # noqa: E402 (imported once the working directory is off the path)

sys.exit(main())
