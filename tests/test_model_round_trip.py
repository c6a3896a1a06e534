"""The generated models take back what they give out, for every family version: a config loaded from
each clean file of the corpus and the examples, dumped (Python and JSON modes), validates again as the
same config, and `check_config` of the dump finds no error. A trainer that saves its resolved config
with a checkpoint reloads and re-checks it; an absent optional section dumps as null, as the trainer
itself holds it."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import trainspec
from trainspec.api import check_config
from trainspec.families import every_version

from .conftest import AXOLOTL_EXAMPLES, CORPUS, ROOT, corpus_world_size

CONFIGS = sorted(
    p
    for folder in (CORPUS, ROOT / "examples", AXOLOTL_EXAMPLES)
    for p in folder.rglob("*")
    if p.suffix in {".toml", ".yaml", ".yml", ".json"}
)


READ_AS_WRITTEN = "axolotl"
"""Axolotl's validators read the config as written, so its resolved config is not one it takes back:
defaults filled (`gradient_accumulation_steps: 1` beside a `batch_size`) or unset keys dumped as null
(`tokenizer_config: null`) are refused when it validates that config again. Its configs round-trip
through the model; `check_config` of the dump is not expected to be clean."""


def world_size(path: Path, version: str) -> int | None:
    """The GPU count a KempnerForge corpus file names; a SpecForge file states its own."""
    return corpus_world_size(path) if version.startswith("kempnerforge") else None


def clean_loads(version: str) -> list[tuple[Path, Any]]:
    """(file, loaded model) for each file that loads with no error as `version`."""
    loaded = []
    for path in CONFIGS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                loaded.append((path, trainspec.load(path, family=version, world_size=world_size(path, version))))
            except trainspec.ConfigError:
                continue
    return loaded


@pytest.mark.parametrize("version", sorted(every_version()))
def test_every_clean_config_round_trips_through_its_model_and_checks_clean(version):
    loaded = clean_loads(version)
    assert len(loaded) >= 10, f"only {len(loaded)} clean configs for {version}"
    for path, config in loaded:
        model = type(config)
        assert model.model_validate(config.model_dump()) == config, path
        assert model.model_validate(config.model_dump(mode="json")) == config, path
        assert model.model_validate_json(config.model_dump_json()) == config, path
        if version.startswith(READ_AS_WRITTEN):
            continue
        found = check_config(config.model_dump(), version, world_size=world_size(path, version))
        assert [d for d in found if d.is_error] == [], path


def test_a_text_only_config_dumps_its_absent_sections_as_null_and_takes_them_back(write):
    config = trainspec.load(write("job.toml", "[train]\nseq_len = 2048\n"), family="kempnerforge@5666d0d")
    sections = ("vision_encoder", "adapter", "vlm", "video")
    dump = config.model_dump()
    assert {k: dump[k] for k in sections} == dict.fromkeys(sections)
    assert type(config).model_validate(dump) == config
    assert check_config(dump, "kempnerforge@5666d0d", world_size=1) == []
