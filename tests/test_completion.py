"""Shell completion through argcomplete, in the real shells: bash and fish complete a command line,
zsh loads the script and registers the completion function."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainspec.families import versions_of

pytestmark = pytest.mark.external  # runs the shells

BIN = str(Path(sys.executable).parent)


def shell(*command: str) -> list[str]:
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=True)
    return done.stdout.split()


BASH = """
eval "$(trainspec completion bash)"
COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; read -r -a COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_python_argcomplete trainspec
printf '%s\\n' "${{COMPREPLY[@]}}"
"""


def test_bash_completes_commands_options_and_family_versions():
    assert shell("bash", "-c", BASH.format(line="trainspec ch")) == ["check"]
    assert "--world-size" in shell("bash", "-c", BASH.format(line="trainspec check --wor"))
    # bash breaks words at `@` (COMP_WORDBREAKS), so it is offered what follows the `@`
    kempnerforge = sorted(f.version for f in versions_of("kempnerforge"))
    assert shell("bash", "-c", BASH.format(line="trainspec check --family kempnerforge@")) == kempnerforge
    specforge = sorted(f.id for f in versions_of("specforge"))
    assert shell("bash", "-c", BASH.format(line="trainspec check --family spec")) == ["specforge", *specforge]


def test_fish_completes_family_versions():
    script = 'trainspec completion fish | source; complete -C "trainspec check --family specforge@"'
    assert shell("fish", "-c", script) == sorted(f.id for f in versions_of("specforge"))


def test_zsh_loads_the_completion_function():
    script = 'autoload -U compinit; compinit -u; eval "$(trainspec completion zsh)"; whence -w _python_argcomplete'
    assert shell("zsh", "-c", script) == ["_python_argcomplete:", "function"]


def test_unknown_shell_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "trainspec", "completion", "tcsh"], capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice" in done.stderr
