"""The family version a team runs, found from the trainer's package installed where trainspec runs.

Teams install trainers by release (`pip install specforge==0.2.0`) and run
trainspec in the same environment. When nobody gave a file's family version
(the file was recognised, or a flag, directive or project names the family
without `@version`) and the family names its trainer's package
(`Family.distribution`), the installed release picks the version named after
it, with a note saying so (`installed-release`) when that is not the newest; a release no version follows
is a warning naming the nearest known versions (`installed-release-unknown`),
and the file is checked as the newest. The release is read from the installed
package's metadata (a folder listing and one small file, once per process): the
trainer itself is never imported. `TRAINSPEC_IGNORE_INSTALLED=1` turns the lookup off; a project
pins a version (or `NAME@latest`) in its configuration.
"""

from __future__ import annotations

import os
import re
from functools import cache

from trainspec.families import other_versions
from trainspec.families.entry_points import installed_version
from trainspec.spec.codes import INSTALLED_RELEASE, INSTALLED_RELEASE_UNKNOWN
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.family import Family

IGNORE = "TRAINSPEC_IGNORE_INSTALLED"
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)")


@cache
def installed_release(distribution: str) -> str | None:
    """The release of `distribution` installed in this Python environment, or None (read as
    `importlib.metadata.version` reads it, without its import cost)."""
    return installed_version(distribution)


def version_given(spec: str) -> bool:
    """Whether a family name as written (`specforge`, `specforge@latest`, `specforge@0.2.0`) gives a version."""
    return "@" in spec


def for_installed(family: Family, file: str) -> tuple[Family, Diagnostic | None]:
    """The version of `family` the installed trainer release selects, with the note or warning that says so;
    `family` itself and None when its trainer is not installed here (or the lookup is off)."""
    if not family.distribution or os.environ.get(IGNORE, "") not in ("", "0"):
        return family, None
    release = installed_release(family.distribution)
    if release is None:
        return family, None
    chosen, said = _selected(family, release)
    return chosen, Diagnostic(file, None, None, (), *said) if said is not None else None


@cache
def _selected(family: Family, release: str) -> tuple[Family, tuple[str, Severity, str] | None]:
    """The version `release` selects, and what a file checked as it is told (rule, severity, message): the
    same for every file of a run."""
    versions = [family, *other_versions(family)]
    match = next((v for v in versions if release in (v.version, f"v{v.version}")), None)
    pin = f"pin another with --family {family.name}@VERSION or in the project configuration"
    if match is family:  # the version the plain name selects anyway: nothing to say
        return family, None
    if match is not None:
        message = f"checked as {match.id}, the release of `{family.distribution}` installed here ({release}); {pin}"
        return match, (INSTALLED_RELEASE.id, Severity.NOTE, message)
    nearest = ", ".join(v.id for v in nearest_releases(release, versions)) or ", ".join(v.id for v in versions)
    message = (
        f"`{family.distribution}` {release} is installed here, a release no version of {family.name} follows; "
        f"checked as {family.id}, the newest; the nearest known: {nearest} (select one with --family, or pin it "
        "in the project configuration)"
    )
    return family, (INSTALLED_RELEASE_UNKNOWN.id, Severity.WARNING, message)


def nearest_releases(release: str, versions: list[Family]) -> list[Family]:
    """The release-named versions just below and just above `release` (by release number), oldest first."""
    wanted = _key(release)
    named = sorted(((k, v) for v in versions if (k := _key(v.version)) is not None), key=lambda kv: kv[0])
    if wanted is None or not named:
        return []
    below = [v for k, v in named if k < wanted][-1:]
    above = [v for k, v in named if k > wanted][:1]
    return below + above


def _key(release: str) -> tuple[int, ...] | None:
    """A release's numbers (`0.2.0` -> (0, 2, 0)); None for a name that is no release (a commit)."""
    found = _RELEASE.match(release)
    if found is None or re.fullmatch(r"[0-9a-f]{7,40}", release):
        return None
    numbers = tuple(int(n) for n in found.group(1).split("."))
    while numbers and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers
