"""The VS Code extension in a real VS Code: code-server in headless Chromium, driven through the page.

The VSIX is built from `editors/vscode` (`build.mjs`) and installed into code-server
(`tools/setup-dev.sh` installs it under `.tools/code-server`, and Chromium from Debian). trainspec
is not on the server's PATH: the extension must find it in the workspace's `.venv`, as a team's
checkout has it. The page must show what a user sees: trainspec's rule ids in the Problems panel
for a broken TOML and a broken YAML config, a hover, a completion, and a quick fix that clears its
diagnostic. Screenshots go to `artifacts/vscode/` (or `$TRAINSPEC_ARTIFACTS/vscode`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.external  # code-server, Chromium and Node

CODE_SERVER = ROOT / ".tools" / "code-server" / "node_modules" / ".bin" / "code-server"
ARTIFACTS = Path(os.environ.get("TRAINSPEC_ARTIFACTS", ROOT / "artifacts")) / "vscode"
JOB = """\
[model]
dim = 4096
n_heads = 32
n_kv_heads = 8

[train]
seq_lenn = 2048

[distributed]
tp = 3
"""
RUN = (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml").read_text().replace("report_to: none", "report_to: wandbx")


def until(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """`condition()`'s first true value, asked again as the page changes; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "job.toml").write_text(JOB)
    (root / "run.yaml").write_text(RUN)
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    installed = shutil.which("trainspec", path=str(Path(sys.executable).parent))
    assert installed is not None, "trainspec is not installed beside this Python (tools/setup-dev.sh)"
    (venv_bin / "trainspec").symlink_to(installed)
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, workspace: Path) -> Iterator[str]:
    """code-server with the built VSIX installed, serving `workspace`; its URL."""
    if not CODE_SERVER.exists():
        pytest.fail(f"code-server is not installed at {CODE_SERVER}: run tools/setup-dev.sh", pytrace=False)
    home = tmp_path_factory.mktemp("code-server")
    vsix = home / "trainspec.vsix"
    subprocess.run(["node", str(ROOT / "editors" / "vscode" / "build.mjs"), str(vsix)], check=True, capture_output=True)
    extensions, user = home / "extensions", home / "user"
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(
        '{"workbench.startupEditor": "none", "telemetry.telemetryLevel": "off", "workbench.tips.enabled": false}'
    )
    dirs = ["--extensions-dir", str(extensions), "--user-data-dir", str(user)]
    env = {**os.environ, "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)}  # no trainspec on PATH
    install = [str(CODE_SERVER), *dirs, "--install-extension", str(vsix)]
    subprocess.run(install, check=True, env=env, capture_output=True)
    port = free_port()
    quiet = ["--disable-telemetry", "--disable-update-check", "--disable-workspace-trust"]
    proc = subprocess.Popen(
        [str(CODE_SERVER), *dirs, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", *quiet, str(workspace)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/?folder={workspace}"

    def answers() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except OSError:
            return proc.poll() is not None and pytest.fail("code-server exited", pytrace=False)

    try:
        until(answers, "code-server to answer")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Chromium is not installed (tools/setup-dev.sh installs Debian's)", pytrace=False)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.goto(server)
        tab.wait_for_selector(".monaco-workbench", timeout=120_000)
        try:
            yield tab
        finally:
            browser.close()


def open_file(page: Any, name: str) -> None:
    page.click(f".explorer-folders-view >> text={name}")
    until(lambda: name in page.inner_text(".tabs-container"), f"{name} to open")
    page.click(".monaco-editor .view-lines")


def go_to_line(page: Any, line: int) -> None:
    page.keyboard.press("Control+g")
    page.wait_for_selector(".quick-input-widget:not([style*='display: none'])")
    page.keyboard.type(str(line))
    page.keyboard.press("Enter")
    until(lambda: f"Ln {line}," in page.inner_text(".statusbar"), f"the cursor on line {line}")


def editor_text(page: Any) -> str:
    """The lines the editor shows (it draws spaces as no-break spaces)."""
    return str(page.inner_text(".monaco-editor .view-lines")).replace("\u00a0", " ")


def problems(page: Any) -> str:
    panel = page.query_selector(".markers-panel")
    if panel is None:
        page.keyboard.press("Control+Shift+m")
        panel = page.wait_for_selector(".markers-panel")
    return str(panel.inner_text())


def visible(page: Any, selector: str) -> str:
    found = page.query_selector(f"{selector}:visible")
    return str(found.inner_text()) if found is not None else ""


def test_the_problems_panel_lists_trainspec_rules_for_toml_and_yaml(page):
    open_file(page, "job.toml")
    shown = until(lambda: "tp-divides-heads" in (text := problems(page)) and text, "the TOML file's problems")
    assert "unknown-key" in shown and "did you mean `seq_len`" in shown
    assert "world-size-unknown" in shown  # a note asks for something: it is listed, as information
    open_file(page, "run.yaml")
    until(lambda: "not-allowed-value" in problems(page), "the YAML file's problems")
    page.screenshot(path=str(ARTIFACTS / "problems.png"))


def test_a_hover_explains_the_rule(page):
    open_file(page, "job.toml")
    go_to_line(page, 7)
    page.keyboard.press("Control+k")
    page.keyboard.press("Control+i")
    said = until(lambda: "error[unknown-key]" in (text := visible(page, ".monaco-hover")) and text, "trainspec's hover")
    assert "did you mean `seq_len`" in said
    page.screenshot(path=str(ARTIFACTS / "hover.png"))
    page.keyboard.press("Escape")


def test_completion_offers_a_key_of_the_section(page):
    open_file(page, "job.toml")
    go_to_line(page, 7)
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("max_st")
    page.keyboard.press("Control+Space")
    offered = until(lambda: visible(page, ".suggest-widget"), "the completion list")
    assert "max_steps" in offered
    page.screenshot(path=str(ARTIFACTS / "completion.png"))
    page.keyboard.press("Escape")
    page.keyboard.press("Control+z")
    until(lambda: "max_st" not in editor_text(page), "the typing undone")


def test_a_quick_fix_clears_its_diagnostic(page):
    open_file(page, "job.toml")
    go_to_line(page, 7)
    page.keyboard.press("Control+.")
    offered = until(lambda: visible(page, ".action-widget"), "the quick fixes")
    assert "Rename `seq_lenn` to `seq_len`" in offered
    page.screenshot(path=str(ARTIFACTS / "quick-fix.png"))
    first = offered.splitlines().index("Rename `seq_lenn` to `seq_len`") - 1  # below the "Quick Fix" heading
    for _ in range(first):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    until(lambda: "seq_len = 2048" in editor_text(page), "the fix applied")
    until(lambda: "unknown-key" not in problems(page), "the unknown-key diagnostic to clear")
    assert "tp-divides-heads" in problems(page)  # the rest stays
    page.screenshot(path=str(ARTIFACTS / "fixed.png"))
