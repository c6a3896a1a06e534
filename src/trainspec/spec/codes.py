"""The ids the engine itself reports, for files of any family: one `Code` object each.

Family rules document themselves (docstrings, schema descriptions); these ids
come from the readers, the schema validator, overrides, the world-size logic
and suppression comments, so they are declared here, each once, with their
severity, documentation and the flags the rest of trainspec asks about them
(`has_flag`). Code outside this module names an id by its constant
(`from .codes import SYNTAX_ERROR`, then `SYNTAX_ERROR.id`), never by its text;
`tests/test_codes.py` holds that. A diagnostic carries the id as plain text
(`Diagnostic.rule`), as it does a family rule's: it is printed, compared with
`--select` patterns and sent between processes like any other id.

The examples are configs, so families provide them (`Family.examples`, keyed
by these ids too); the catalogue takes the first family's that has one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from trainspec.spec.diagnostics import Severity
from trainspec.spec.errors import InvalidValue


class Category(enum.Enum):
    """Which stage of a check reports the id: `trainspec rules` and the reference docs group the engine's
    ids by it, and SARIF tags each rule with it (`tag`), so a reader finds where a problem comes from."""

    READ = "reading and parsing the file"
    SETTINGS = "the project configuration and file directives"
    FAMILY = "finding the file's config family"
    SCHEMA = "the schema validator"
    OVERRIDE = "command-line overrides"
    LOADER = "where the family's own loader reads the file differently"
    WORLD_SIZE = "world sizes"
    TARGET = "the target GPU"
    SUPPRESSION = "suppression comments"
    INTERNAL = "a failure of trainspec or of a family's code"
    LIMIT = "the limits an untrusted input is held to"
    RUNTIME = "on the machine that runs the job (trainspec.distributed)"

    @property
    def tag(self) -> str:
        """The category as one word of a machine-read list (`world-size`)."""
        return self.name.lower().replace("_", "-")


class Flag(enum.Flag):
    """What the rest of trainspec needs to know about an id, each flag named by what it means."""

    NONE = 0
    FILE_NOT_CHECKED = enum.auto()
    """The file could not be checked at all, or not as written (a YAML tag, which its loader refuses too):
    reported whatever --select/--ignore say (so CI never passes it), and an editor offers no fix for it."""
    SCHEMA_SERVERS_REPORT = enum.auto()
    """yaml-language-server and taplo report the problem too, from the schema or their parser: an
    editor set to `rulesOnly` leaves it to them."""
    QUIET_IN_EDITORS = enum.auto()
    """Shown as a hint: an editor opens every YAML, TOML and JSON file, and most are no training config."""
    BREAKS_DOCUMENT = enum.auto()
    """A quick fix that brings it in has broken the buffer rather than fixed it."""


@dataclass(frozen=True)
class Code:
    """One engine id; constructing it registers it (an id declared twice is an error)."""

    id: str
    severity: Severity
    category: Category
    flags: Flag
    doc: str
    """Markdown: the first paragraph is the summary, the rest `trainspec explain` and the docs print."""

    def __post_init__(self) -> None:
        if self.id in REGISTRY:
            raise InvalidValue(f"engine id {self.id!r} is declared twice")
        REGISTRY[self.id] = self

    @property
    def summary(self) -> str:
        """The first paragraph of `doc` on one line, as `trainspec rules` lists it."""
        return self.doc.split("\n\n")[0].replace("\n", " ")


REGISTRY: dict[str, Code] = {}
"""Every engine id, by id, in the order declared."""


def has_flag(rule_id: str, flag: Flag) -> bool:
    """Whether `rule_id` is an engine id with `flag` (a family's rule id has none)."""
    code = REGISTRY.get(rule_id)
    return code is not None and flag in code.flags


SYNTAX_ERROR = Code(
    "syntax-error",
    Severity.ERROR,
    Category.READ,
    Flag.FILE_NOT_CHECKED | Flag.SCHEMA_SERVERS_REPORT | Flag.BREAKS_DOCUMENT,
    """The file is not valid TOML, YAML or JSON (or not UTF-8 text).

Nothing else can be checked until the file parses; the diagnostic points at the
place the parser gave up, which may be just after the real mistake. The message
says what was expected there (for a YAML indentation mistake, which lines set the
indentation it breaks) and that checking stopped there, so more problems may
follow once it is fixed.""",
)

DUPLICATE_KEY = Code(
    "duplicate-key",
    Severity.ERROR,
    Category.READ,
    Flag.SCHEMA_SERVERS_REPORT | Flag.BREAKS_DOCUMENT,
    """A YAML mapping writes the same key twice.

Most YAML loaders silently keep the last value, so the first one is a trap for
whoever reads the file. (In TOML a repeated key is a syntax error.)""",
)

UNSUPPORTED_YAML = Code(
    "unsupported-yaml",
    Severity.ERROR,
    Category.READ,
    Flag.FILE_NOT_CHECKED,
    """A YAML value carries a tag other than the plain core ones.

Configs are plain data; tags such as `!!python/tuple` would build objects that
other readers of the file cannot, so they are refused.""",
)

NOT_A_MAPPING = Code(
    "not-a-mapping",
    Severity.ERROR,
    Category.READ,
    Flag.FILE_NOT_CHECKED,
    """The document's top level is not a table of sections.

A config is a mapping from section names to tables; a list, a scalar or an
empty document cannot be one.""",
)

FILE_NOT_FOUND = Code(
    "file-not-found",
    Severity.ERROR,
    Category.READ,
    Flag.FILE_NOT_CHECKED,
    """A path on the command line does not exist, or a directory or glob
holds no config files.

trainspec exits with status 2 (a usage problem) rather than 1.""",
)

FILE_NOT_READABLE = Code(
    "file-not-readable",
    Severity.ERROR,
    Category.READ,
    Flag.FILE_NOT_CHECKED,
    """A file exists but cannot be read (no permission, a name too long,
an I/O error).

trainspec exits with status 2 (a usage problem) rather than 1; the other
files are still checked.""",
)

UNKNOWN_FAMILY = Code(
    "unknown-family",
    Severity.ERROR,
    Category.FAMILY,
    Flag.FILE_NOT_CHECKED | Flag.QUIET_IN_EDITORS,
    """trainspec cannot tell which config family the file belongs to.

The family is taken from a file directive (`# trainspec: family=NAME`), `--family`,
the project configuration, a schema the file names (`$schema`, a
yaml-language-server modeline, a taplo `#:schema` line), or else from its keys:
a family claims a file only when it reads its format, knows almost every
top-level key (and most keys of those sections) and finds what it requires. A
file named on the command line that no family claims is this error (exit status
2), saying why. A file found by a directory walk, a glob or the project's
`configs` globs (and, with `--skip-unknown`, a named one) is `unclaimed-config`
when its keys look like a family's, else listed as skipped in the summary.""",
)

UNCLAIMED_CONFIG = Code(
    "unclaimed-config",
    Severity.WARNING,
    Category.FAMILY,
    Flag.NONE,
    """A file a directory walk, a glob or a hook found looks like a training config, but no family claims
it, so it was not checked.

Its keys are at least half one family's (three keys or more), or a family would claim it but for
its format, or several families would: typically a config that lacks a key its family requires
(an Axolotl config without `base_model`). The message says why no family claims it. Check it as
the family it is meant for with `--family NAME`, a file directive (`# trainspec: family=NAME`),
or a `[[configs]]` entry of the project configuration whose `paths` match it, with `family =
"NAME"`; or exclude it (`exclude`) when it is no config. `--warnings-as-errors` (or
`warnings-as-errors = true` in the project configuration) fails the run on it, for CI.

A file whose keys look like no family's config (a GitHub workflow, a docker-compose file, a
`package.json`) is not this warning: it is listed in the summary line as skipped (`N skipped,
no known family: ...`; JSON `skipped` gives each reason).""",
)

WRONG_FORMAT = Code(
    "wrong-format",
    Severity.ERROR,
    Category.FAMILY,
    Flag.FILE_NOT_CHECKED,
    """The file is written in a format its config family does not read.

KempnerForge reads TOML only; SpecForge reads YAML and JSON. The family came from
`--family`, the project configuration or a file directive; the family's own loader
would refuse the file. A directory walk or glob lists such a file as skipped instead.""",
)

INSTALLED_RELEASE = Code(
    "installed-release",
    Severity.NOTE,
    Category.FAMILY,
    Flag.NONE,
    """The file was checked as the family version of the trainer release installed where trainspec runs.

No version was given (`--family NAME`, a directive or the project configuration name the family
without one, or the file was recognised), and the trainer's package is installed in the same
Python environment: its release (read from the installed package's metadata, without importing
it) selects the family version of that release, as the job would run there. Pin another version
with `--family NAME@VERSION` or in the project configuration (`NAME@latest`: the newest);
`TRAINSPEC_IGNORE_INSTALLED=1` turns the lookup off.""",
)

INSTALLED_RELEASE_UNKNOWN = Code(
    "installed-release-unknown",
    Severity.WARNING,
    Category.FAMILY,
    Flag.NONE,
    """The trainer's package installed where trainspec runs is a release no family version follows.

The file is checked as the newest version, which may accept or refuse what that release does not;
the message names the known versions nearest to the installed release. Select one with `--family
NAME@VERSION` or pin it in the project configuration, or upgrade trainspec.""",
)

INVALID_PROJECT_CONFIG = Code(
    "invalid-project-config",
    Severity.ERROR,
    Category.SETTINGS,
    Flag.FILE_NOT_CHECKED,
    """The project configuration (`[tool.trainspec]` in pyproject.toml, or a `.trainspec.toml`)
that governs the file cannot be used.

The message names the setting, its line and what is expected; `docs/project.md`
describes every setting. trainspec exits with status 2 until it is fixed (or pass
`--isolated` to ignore project configurations).""",
)

INVALID_DIRECTIVE = Code(
    "invalid-directive",
    Severity.ERROR,
    Category.SETTINGS,
    Flag.NONE,
    """A `# trainspec:` directive line that trainspec cannot read.

A directive sets the file's own world sizes and family:
`# trainspec: world-size=8,16 family=kempnerforge@5666d0d`, on a line of its own.
Suppressions are written `# trainspec: ignore[rule-id]`.""",
)

INVALID_FAMILY_SCHEMA = Code(
    "invalid-family-schema",
    Severity.ERROR,
    Category.FAMILY,
    Flag.FILE_NOT_CHECKED,
    """The config family's schema is not a valid JSON Schema, or not a
self-contained one (a `$ref` to another file or URL).

This is a problem of the family's package, not of the config: trainspec exits
with status 2. trainspec's own schemas are checked by its tests.""",
)

UNKNOWN_KEY = Code(
    "unknown-key",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT | Flag.BREAKS_DOCUMENT,
    """A key the schema does not know at that place: usually a typo or a key in
the wrong section.

The message suggests a known key only when it is close to the written one (or the
written one starts it), or names the section where the key belongs; a table with
many keys is not listed inline, the family's reference page lists them. Keys of a
section written without the section's header (an upstream preset pasted without
`[model]`) are one error, at the first of them, naming the header to add.""",
)

MISSING_KEY = Code(
    "missing-key",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A key the schema requires is not written.

Some keys are required only when another key is set; the message says which.""",
)

WRONG_TYPE = Code(
    "wrong-type",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A value has the wrong type: text for a number, a number for a boolean, and so on.

Integers are strict: `2.0` is not an integer, and `true` is not a number.""",
)

NOT_ALLOWED_VALUE = Code(
    "not-allowed-value",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A value is not one of the values the field accepts.

The message lists them and suggests the closest one.""",
)

OUT_OF_RANGE = Code(
    "out-of-range",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A number (or a list's length, or a text's length) is outside the
field's bounds.""",
)

PATTERN_MISMATCH = Code(
    "pattern-mismatch",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A text value does not match the pattern its field requires.

Reported for a schema `pattern` that carries no rule id of its own; every
pattern in the built-in schemas names its own rule, so this id comes only from
other families' schemas.""",
)

INVALID_VALUE = Code(
    "invalid-value",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.SCHEMA_SERVERS_REPORT,
    """A value breaks a schema constraint that has no more specific id (e.g.
repeated list items).""",
)

NON_FINITE_NUMBER = Code(
    "non-finite-number",
    Severity.ERROR,
    Category.SCHEMA,
    Flag.NONE,
    """A number is NaN or infinite.

TOML and YAML can write `nan` and `inf`, but no training setting means them.""",
)

OVERRIDE_SYNTAX = Code(
    "override-syntax",
    Severity.ERROR,
    Category.OVERRIDE,
    Flag.NONE,
    """An override (`--set PATH=VALUE`) is malformed: no `=`, or a path
that cannot be read.""",
)

OVERRIDE_UNKNOWN_PATH = Code(
    "override-unknown-path",
    Severity.ERROR,
    Category.OVERRIDE,
    Flag.NONE,
    """An override names a path the schema does not have, or a list
item that does not exist.""",
)

OVERRIDE_INVALID_VALUE = Code(
    "override-invalid-value",
    Severity.ERROR,
    Category.OVERRIDE,
    Flag.NONE,
    """An override's value cannot be read (e.g. it is empty for a
non-text field).

Values are read as YAML 1.2 flow values (`[0.9, 0.95]`, `true`, `3e-4`, `null`).""",
)

OVERRIDE_REPAIRS_FILE = Code(
    "override-repairs-file",
    Severity.ERROR,
    Category.LOADER,
    Flag.NONE,
    """An override fixes an error of the file, but the family's own loader checks the file before it
applies overrides, so the launch is refused all the same.

KempnerForge and SpecForge both validate the file on its own, then apply the command-line
overrides and validate again. trainspec checks the merged config (the error is gone there) and
reports the file's own problem as this error: fix the file itself. Rules the trainer applies only
at launch, to the final config, are exempt.""",
)

WORLD_SIZE_CHECKED = Code(
    "world-size-checked",
    Severity.NOTE,
    Category.WORLD_SIZE,
    Flag.NONE,
    """With several world sizes (`--world-size 8,16,64`), a size at which every world-size rule passes.

Sizes that fail show the failing rules instead, each message starting `at world size N:`.""",
)

WORLD_SIZE_UNKNOWN = Code(
    "world-size-unknown",
    Severity.NOTE,
    Category.WORLD_SIZE,
    Flag.NONE,
    """Rules that need the number of ranks were skipped: no world size was given.

Pass `--world-size N` (or several: `--world-size 8,16,64`) to check them.""",
)

GPU_UNKNOWN = Code(
    "gpu-unknown",
    Severity.NOTE,
    Category.TARGET,
    Flag.NONE,
    """Rules that need the GPU the job runs on were skipped: no target GPU was given.

Pass `--gpu NAME` (`h100`, `a100-40gb`, `mi300x`, ...; an unknown name is answered with the
list) or a CUDA compute capability (`--gpu sm_90`, `--gpu 9.0`), set `gpu` in the project
configuration, or write `# trainspec: gpu=h100` in the file, to check them.""",
)

GPU_MEMORY_EXCEEDED = Code(
    "gpu-memory-exceeded",
    Severity.ERROR,
    Category.WORLD_SIZE,
    Flag.NONE,
    """The family's estimate of one rank's memory is above the memory of the GPU (`--gpu-memory 80GiB`,
or `gpu-memory` in the project configuration).

The message names the largest part of the estimate (weights, gradients, optimizer states, step
buffers, activations); `trainspec show --world-size N` lists every part with what it assumes, and
`trainspec plan --gpu-memory` lists the layouts that fit. The estimate is the family's (for
KempnerForge, docs/plan.md states the model and its known error); a family without a memory model is
not checked.""",
)

WORLD_SIZE_FROM_PROJECT = Code(
    "world-size-from-project",
    Severity.NOTE,
    Category.WORLD_SIZE,
    Flag.NONE,
    """The project configuration or a file directive states world sizes for the file, and the ones
given with `--world-size` replace them.

The command line wins, as it does in other linters: a size typed for this run is the size checked,
never left aside. Without `--world-size`, a file directive wins, then the file's `[[configs]]`
entry, then the project's `world-size` (see `docs/project.md`).""",
)

WORLD_SIZE_DERIVED = Code(
    "world-size-derived",
    Severity.NOTE,
    Category.WORLD_SIZE,
    Flag.NONE,
    """The world size was taken from the config itself (e.g. nodes ×
processes per node).

World-size rules run at that size, the one the trainer's launcher starts. A world size given for
the file (`--world-size`, the project configuration or a file directive) that differs breaks the
family's topology rule; that is reported once, however many such sizes were given. (The example
is a SpecForge run, whose trainer topology states its world size.)""",
)

UNUSED_SUPPRESSION = Code(
    "unused-suppression",
    Severity.WARNING,
    Category.SUPPRESSION,
    Flag.BREAKS_DOCUMENT,
    """A `# trainspec: ignore[rule-id]` comment suppresses nothing.

Either the problem was fixed (remove the comment) or the id is wrong. A
suppression comment covers its own line, or, alone on a line, the next line
that is not a comment; it suppresses a diagnostic on any line the diagnostic
points at (its own place or a related key it names). World-size rules are not
reported as unused when no world size was given.""",
)

OVERRIDE_REFUSED_BY_LOADER = Code(
    "override-refused-by-loader",
    Severity.ERROR,
    Category.LOADER,
    Flag.NONE,
    """An override trainspec accepts, but the family's own loader would refuse the launch with.

SpecForge applies its dotted overrides to the loaded config, as text: a key must
already exist there (a path into a null section, or with a `[N]` index, is unknown),
`null` stays the text "null", and a list or mapping is read only when the current
value is one. trainspec's `--set` is kinder, so this reports what SpecForge itself
would refuse: replace the whole section, or write the value in the file.""",
)

LOADER_FORMAT = Code(
    "loader-format",
    Severity.ERROR,
    Category.LOADER,
    Flag.NONE,
    """The family's own loader picks the file format by another rule than trainspec and cannot parse
the file that way.

SpecForge reads a file as YAML only when its name ends exactly in lower-case `.yaml`
or `.yml`; anything else, `RUN.YAML` included, it reads as JSON. trainspec matches
extensions case-insensitively, so it reads what the trainer would refuse: rename
the file.""",
)

YAML_DIALECT = Code(
    "yaml-dialect",
    Severity.WARNING,
    Category.LOADER,
    Flag.NONE,
    """A plain YAML scalar that the family's loader (YAML 1.1) reads as another value than YAML 1.2 does,
though both values are valid.

trainspec and editors read YAML 1.2; a loader built on PyYAML's safe loader reads
YAML 1.1, where `017` is the octal 15 (17 in YAML 1.2). The job starts, with the
loader's value: write the value so both read it alike.

Where only the loader's reading fits the field (`1:30` is the integer 90 and `1_000`
the integer 1000 in YAML 1.1, text in YAML 1.2; `0o17` is text in YAML 1.1, the
integer 15 in YAML 1.2), trainspec checks the loader's value, as the job would run.""",
)

YAML_DIALECT_REFUSED = Code(
    "yaml-dialect-refused",
    Severity.ERROR,
    Category.LOADER,
    Flag.NONE,
    """A plain YAML scalar that the family's loader (YAML 1.1) reads as a value the field refuses, though
its YAML 1.2 reading is valid.

`run_id: 2024_01_01` is an integer in YAML 1.1, `output_dir: off` is false and
`run_id: 2024-01-01` a date, which text fields refuse; `0o17` is text in YAML 1.1,
which an integer field refuses. The loader would not start the job: quote text,
write numbers in decimal.""",
)

INTERNAL_ERROR = Code(
    "internal-error",
    Severity.ERROR,
    Category.INTERNAL,
    Flag.NONE,
    """trainspec itself failed while checking this file.

This is a bug in trainspec, not a problem of the config: the message names the
exception and where it was raised; please report it with the file. The other
files of the run are still checked, and the run fails (exit status 1), since
this file was not checked.""",
)

DIAGNOSTICS_TRUNCATED = Code(
    "diagnostics-truncated",
    Severity.NOTE,
    Category.LIMIT,
    Flag.FILE_NOT_CHECKED,
    """A file has more diagnostics than trainspec reports for one file
(`TRAINSPEC_MAX_DIAGNOSTICS`, 1,000 by default).

The first ones are reported and this one counts the rest; it is an error when an
error is among them, so the run fails as it would have. Schema validation stops
explaining problems at the same limit (explaining is what costs time), and this
diagnostic then says that more were not explained. Fix the ones shown (often one
mistake, such as a wrong family, causes them all), or raise the limit.""",
)

HOOK_FAILED = Code(
    "hook-failed",
    Severity.ERROR,
    Category.INTERNAL,
    Flag.NONE,
    """A family's own hook (a migration, a normalizer, the step that derives
defaults) raised an exception on this config.

This is a bug in the family's code (a plug-in's, or a built-in one's): the
message names the family, the hook and the exception. Everything the hook did
not reach is still checked.""",
)

MODEL_MISMATCH = Code(
    "model-mismatch",
    Severity.ERROR,
    Category.INTERNAL,
    Flag.NONE,
    """The typed model `trainspec.load` builds refused a value the schema accepted.

The generated pydantic model and the canonical schema should agree on every
value; this says they do not, for the path named. It is reported by `load`
(as a ConfigError), never by `check`; please report it with the config.""",
)

VERIFY_FAILED = Code(
    "verify-failed",
    Severity.ERROR,
    Category.RUNTIME,
    Flag.NONE,
    """`trainspec.distributed.verify` could not compare this rank's config with
the other ranks' (the collective failed, or timed out).

The message carries the underlying error; the launch should stop, since the
ranks could not agree that they run the same config.""",
)

CONFIG_DIFFERS_ACROSS_RANKS = Code(
    "config-differs-across-ranks",
    Severity.ERROR,
    Category.RUNTIME,
    Flag.NONE,
    """The ranks of one job loaded different configs (`trainspec.distributed.verify`).

Every rank must train with the same config; the message names the ranks and
the first config paths whose values differ. Usually one node read a stale copy
of the file, or an override reached only some ranks.""",
)

DEVICE_COUNT_PER_NODE = Code(
    "device-count-per-node",
    Severity.ERROR,
    Category.RUNTIME,
    Flag.NONE,
    """More processes run on this node (`LOCAL_WORLD_SIZE`, else
`SLURM_NTASKS_PER_NODE`) than GPUs torch can see.

Reported by `trainspec.distributed.device_diagnostics`; two processes would
share one GPU, or the launch fails when a rank selects a device that does not
exist.""",
)
