"""The command line: one module per command (`check.py`, `plan.py`, ...); exit codes decided here.

Exit status: 0 no errors (warnings allowed), 1 a config has errors,
2 usage problems (unknown family, missing file, bad arguments), files
that could not be written, and trainspec's own failures (reported in one
line; TRAINSPEC_TRACEBACK=1 shows the traceback), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

COMMANDS = ("check", "plan", "show", "rules", "explain", "migrate", "schema", "editor", "lsp", "completion")


def versions() -> str:
    """trainspec's version and every family version it ships, with the upstream version each follows."""
    from trainspec.families import every_version
    from trainspec.spec import __version__

    lines = [f"trainspec {__version__}"]
    for family in sorted(every_version().values(), key=lambda f: (f.name, f.released)):
        follows = f": follows {family.follows}" if family.follows else ""
        lines.append(f"  {family.label}{follows}")
    return "\n".join(lines)


class _Versions(argparse.Action):
    """`--version`, computed when asked for (it reads every installed family)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(versions())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors name the closest option or command to one it does not know."""

    def error(self, message: str) -> NoReturn:
        super().error(message + did_you_mean(message, self))


def _known_words(parser: argparse.ArgumentParser) -> list[str]:
    """The options of `parser`, its subcommands' names, and the options of each subcommand it holds."""
    words = list(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            words += list(action.choices)
            for sub in action.choices.values():
                words += list(sub._option_string_actions)
    return words


def did_you_mean(message: str, parser: argparse.ArgumentParser) -> str:
    """`; did you mean --world-size?` for a mistyped option or command in an argparse error, else nothing."""
    found = re.search(r"unrecognized arguments?: (.*)$|invalid choice: '([^']*)'", message)
    if found is None:
        return ""
    import difflib  # only for a command line argparse refuses

    typed = (found.group(1) or "").split() or [found.group(2)]
    words = _known_words(parser)
    guesses = []
    for word in typed:
        name = word.split("=", 1)[0]
        close = difflib.get_close_matches(name, [w for w in words if w.startswith("-") == name.startswith("-")], 1)
        if close and close[0] != name:
            guesses.append(close[0])
    return f"; did you mean {' / '.join(dict.fromkeys(guesses))}?" if guesses else ""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone when it names one.

    A command line that names its command needs no other: registering them all imports
    every command's dependencies, about 15 ms of a one-file check.
    """
    parser = _Parser(
        prog="trainspec",
        description="Validate ML training-run configs.",
        epilog="`trainspec --version` lists the family versions and the upstream trainers they follow.",
    )
    parser.add_argument("--version", action=_Versions, nargs=0, help="show the version and the family versions")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (command,) if command in COMMANDS else COMMANDS:
        importlib.import_module(f"trainspec.cli.{name}").register(sub)
    return parser


def complain(problem: str | BaseException, file: Any = None) -> None:
    """A problem on stderr as `trainspec: ...`: the one way a command prints one. Each line is escaped for
    the terminal, so text a repository wrote (a key, a path, a rule id) cannot start a line of its own
    (a CI annotation such as `::error`) or send an escape sequence; only the lines trainspec made are lines."""
    from trainspec.spec.errors import TrainspecError
    from trainspec.spec.escaping import terminal

    lines = problem.lines if isinstance(problem, TrainspecError) else (str(problem),)
    first, *rest = lines or ("",)
    print("\n".join([terminal(f"trainspec: {first}"), *map(terminal, rest)]), file=file or sys.stderr)


_DOTTED = re.compile(r"--[\w-]+(?:\.[\w-]+|\[\d+\])+(?:=|$)")


def _dotted_overrides(argv: list[str]) -> tuple[list[str], list[str]]:
    """(KempnerForge-style `--section.key=value` arguments, the rest), before argparse sees them.

    argparse takes an argument holding a space (`'--optimizer.betas=(0.9, 0.95)'`) for a
    positional, so these are set aside first, in order; nothing after `--` is touched.
    """
    end = argv.index("--") if "--" in argv else len(argv)
    held = [a for a in argv[:end] if _DOTTED.match(a)]
    return held, [a for a in argv[:end] if not _DOTTED.match(a)] + argv[end:]


def _cache_on(command_line: list[str]) -> bool:
    """Whether a check may read the result cache: not with `--no-cache` or TRAINSPEC_NO_CACHE (then the
    cache's modules, and the hashing they import, are never loaded)."""
    from trainspec.engine.cache_store import turned_off

    return "--no-cache" not in command_line and not turned_off()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status; no traceback reaches the user from here.

    Ctrl-C is exit 130 with "interrupted" wherever it lands, also while the commands
    are imported; an OS error no command turned into a message is one line, exit 2.
    """
    try:
        command_line = sys.argv[1:] if argv is None else list(argv)
        completing = "_ARGCOMPLETE" in os.environ  # the shell asks for completions (see `trainspec completion`)
        if command_line[:1] == ["check"] and not completing and _cache_on(command_line):
            from trainspec.engine.cache_run import replay  # a run over unchanged files: its stored output

            replayed = replay(command_line)
            if replayed is not None:
                return replayed
        held, rest = _dotted_overrides(command_line)
        parser = build_parser(None if completing or not rest else rest[0])
        if completing:
            import argcomplete

            argcomplete.autocomplete(parser)
        args, extras = parser.parse_known_args(rest)
        args.command_line = command_line
        extras = held + extras
        if extras and not getattr(args, "accepts_extras", False):
            parser.error("unrecognized arguments: " + " ".join(extras))
        if extras:  # a flag neither the command nor KempnerForge's --section.key form reads: a typo
            unread = [a for a in extras if a.startswith("--") and "=" not in a and "." not in a]
            if unread:
                parser.error("unrecognized arguments: " + " ".join(unread))
        from trainspec.spec.limits import ALL as ALL_LIMITS

        for limit in ALL_LIMITS:  # a budget set to nonsense is a usage error before any work
            limit.value  # noqa: B018
        return int(args.run(args, extras, parser))
    except KeyboardInterrupt:
        print("trainspec: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except OSError as exc:
        complain(exc)
        return 2
    except _trainspec_error() as exc:  # a budget's setting that cannot be used, raised wherever it is read
        complain(exc)
        return 2
    except Exception as exc:  # a bug in trainspec: one line to report, not a traceback
        if os.environ.get("TRAINSPEC_TRACEBACK"):
            raise
        complain(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in trainspec, please report "
            "it (TRAINSPEC_TRACEBACK=1 shows the traceback)"
        )
        return 2


def _trainspec_error() -> type[Exception]:
    """TrainspecError, imported when an exception reaches `main` (a replayed check imports none of `spec`)."""
    from trainspec.spec.errors import TrainspecError

    return TrainspecError
