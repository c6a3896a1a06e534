#!/usr/bin/env bash
# Everything the test suite needs, on a fresh Debian or Ubuntu machine with Python >= 3.11, Node 20
# and npm: the system packages the editor and shell tests drive, a virtualenv `.venv` with a
# current pip, torch 2.13.0 (the CPU build where the platform has one), trainspec with its test
# extras, SpecForge 0.2.0's and Axolotl 0.18.0's config loaders, Axolotl 0.19.0's in a folder of its
# own (.oracles/), and the Node language servers.
# Safe to run again: what is already there is kept. CI runs this same script (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# zsh and fish: the completion tests (tests/test_completion.py); neovim, emacs-nox, elpa-eglot
# and elpa-yaml-mode: docs/lsp.md's Neovim and Emacs recipes (tests/test_editor_neovim.py,
# tests/test_editor_emacs.py); chromium, ripgrep and what code-server's native modules build with:
# VS Code in a browser (tests/test_vscode_browser.py).
PACKAGES="zsh fish neovim emacs-nox elpa-eglot elpa-yaml-mode chromium ripgrep build-essential pkg-config
  libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev"
# shellcheck disable=SC2086
if ! dpkg -s $PACKAGES >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  echo "==> apt: $PACKAGES (and what they depend on, nothing they only recommend)"
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -q --no-install-recommends --no-upgrade $PACKAGES
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# The pip a virtualenv starts with may be too old for the pre-commit test's `git+file://` URL.
echo "==> .venv: the current pip"
.venv/bin/python -m pip install -q --upgrade pip
# torch's CPU build is all the tests need. On Linux x86_64 PyPI's torch is the CUDA build (several GB),
# so the CPU wheel index is used there unless TORCH_INDEX_URL names another (empty: pip's own index);
# an index that cannot be reached is left out, with a word, and pip takes torch from its own.
if [ -z "${TORCH_INDEX_URL+set}" ] && [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  TORCH_INDEX_URL="https://download.pytorch.org/whl/cpu"
fi
if [ -n "${TORCH_INDEX_URL:-}" ] && ! .venv/bin/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=10)" "$TORCH_INDEX_URL" 2>/dev/null; then
  echo "    $TORCH_INDEX_URL cannot be reached: torch comes from pip's own index (on Linux x86_64 PyPI's is the CUDA build)"
  TORCH_INDEX_URL=""
fi
FROM="pip's own index"
if [ -n "${TORCH_INDEX_URL:-}" ]; then FROM="$TORCH_INDEX_URL"; fi
echo "==> .venv: torch 2.13.0 from $FROM (the largest download: a progress bar follows)"
.venv/bin/python -m pip install --progress-bar on ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} torch==2.13.0
echo "==> .venv: trainspec (editable) with its [test,torch] extras: pytest, ruff, mypy, hypothesis, pre-commit, ..."
.venv/bin/python -m pip install --progress-bar on -e '.[test,torch]'
# Axolotl's released loader, the tests' oracle (tests/axolotl_loader.py): validating a config
# imports transformers, accelerate, peft, pillow and addict (the versions axolotl 0.18.0 pins; torch is
# the one above), so those come with their dependencies and axolotl itself without its own (datasets,
# bitsandbytes, trl, ... are for training; its pins of pydantic, PyYAML and torch would replace ours).
echo "==> .venv: what Axolotl's config validation imports: transformers, accelerate, peft, pillow, addict"
.venv/bin/python -m pip install --progress-bar on transformers==5.14.1 accelerate==1.13.0 peft==0.19.1 pillow==13.0.0 addict==2.4.0
# SpecForge's released loader, the tests' oracle (tests/specforge_loader.py): only its
# specforge/config/schema.py is used (it needs pydantic and the standard library), so none of the
# package's own dependencies (torch, SGLang, transformers) are installed. Installed after every
# package with dependencies: pip would otherwise list what it deliberately lacks as conflicts.
echo "==> .venv: the released loaders, without their dependencies: specforge 0.2.0, axolotl 0.18.0"
.venv/bin/python -m pip install -q --no-deps specforge==0.2.0
.venv/bin/python -m pip install -q --no-deps axolotl==0.18.0
# Axolotl 0.19.0's loader, the second oracle (tests/axolotl_loader.py runs it in a subprocess with this
# folder first on sys.path): it pins transformers, peft, huggingface_hub and tokenizers releases other
# than 0.18.0's, so those go into the folder with it; torch, pydantic, PyYAML, accelerate and the rest
# come from .venv. Installed once: a folder holding that release is kept.
ORACLE_019=.oracles/axolotl-0.19.0
if [ ! -f "$ORACLE_019/axolotl-0.19.0.dist-info/METADATA" ]; then
  echo "==> $ORACLE_019: axolotl 0.19.0 with the transformers, peft, huggingface_hub and tokenizers it pins"
  rm -rf "$ORACLE_019"
  .venv/bin/python -m pip install -q --no-deps --target "$ORACLE_019" axolotl==0.19.0 \
    transformers==5.16.1 peft==0.20.0 huggingface_hub==1.17.0 tokenizers==0.23.1
fi
echo "==> node_modules: the language servers the editor tests drive (npm ci)"
npm ci --no-audit --no-fund

# code-server (VS Code served to a browser) for tests/test_vscode_browser.py, under .tools/: 4.100 is
# its last release for Node 20. Its install builds native modules and its ripgrep package would
# fetch a binary from outside the npm registry: Debian's ripgrep is put in that package's download
# cache first (@vscode/ripgrep 1.15.11 asks for ripgrep v13.0.0-10).
CODE_SERVER=.tools/code-server
if [ ! -x "$CODE_SERVER/node_modules/.bin/code-server" ]; then
  echo "==> $CODE_SERVER: code-server 4.100.3 (a few minutes, the first time: it builds native modules)"
  cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$cache"
  tar czf "$cache/ripgrep-v13.0.0-10-$(uname -m)-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  mkdir -p "$CODE_SERVER"
  npm install --prefix "$CODE_SERVER" --ignore-scripts --no-audit --no-fund code-server@4.100.3
  (cd "$CODE_SERVER" && npm rebuild argon2)
  (cd "$CODE_SERVER/node_modules/code-server" &&
    npm_config_yes=true npm_config_unsafe_perm=true npm_config_user_agent="npm node/$(node --version)" sh ./postinstall.sh)
fi
