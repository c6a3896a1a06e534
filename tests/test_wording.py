"""Messages a person reads: words instead of regular expressions, a suggestion for every typo, whole sentences."""

from __future__ import annotations

import json

import pytest

from trainspec.cli import main
from trainspec.families import versions_of
from trainspec.rules.catalogue import catalogue

from .conftest import ROOT

SPECFORGE = ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml"
KF_7B = ROOT / "examples" / "kempnerforge_7b_12gpu.toml"


def errors(capsys, *args: str) -> list[str]:
    main(list(args))
    return [line for line in capsys.readouterr().out.splitlines() if "error[" in line]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("", "must not be empty (it must be non-empty, with no whitespace anywhere)"),
        ("a b", "must not contain whitespace"),
    ],
)
def test_a_pattern_error_is_said_in_words(capsys, value, said):
    (line,) = errors(capsys, "check", "--isolated", str(SPECFORGE), "--set", f"model.input_modality={value}")
    assert said in line and "pattern" not in line and "\\t-\\r" not in line


def test_the_known_patterns_each_have_words():
    from trainspec.validate.explain import _PATTERNS

    for family in versions_of("specforge"):
        name = family.id
        text = json.dumps(family.schema.root)
        found = {p for p in _PATTERNS if json.dumps(p) in text}
        assert found == set(_PATTERNS), name


def test_a_gpu_training_cannot_use_is_an_error_not_a_warning(capsys, tmp_path):
    config = tmp_path / "job.yaml"
    config.write_text(
        (ROOT / "examples" / "axolotl_llama3_8b_lora.yaml").read_text().replace("bf16: auto", "bf16: true")
    )
    code = main(["check", "--isolated", "--family", "axolotl", str(config), "--gpu", "v100"])
    out = capsys.readouterr().out
    assert code == 1 and "error[bf16-unsupported-gpu]" in out


def test_rule_summaries_are_whole_sentences(capsys):
    from trainspec.families import all_families

    for info in catalogue(all_families()):
        assert info.summary.rstrip().endswith((".", ")", "?", "`")), (info.id, info.summary)
    main(["rules", "axolotl@0.18.0"])
    line = next(x for x in capsys.readouterr().out.splitlines() if "batch-size-two-of-three" in x)
    assert "batch_size from the other two, so at least two must be written" in line


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["check", str(KF_7B), "--wold-size", "8"], "did you mean --world-size?"),
        (["show", str(KF_7B), "--wold-size", "8"], "did you mean --world-size?"),
        (["plan", str(KF_7B), "--gpus", "8", "--gpu-per-node", "4"], "did you mean --gpus-per-node?"),
        (["chek", str(KF_7B)], "did you mean check?"),
    ],
)
def test_a_mistyped_flag_or_command_gets_a_suggestion(capsys, argv, meant):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert meant in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "path", "said"),
    [
        (KF_7B, "optimizer.learning_rate", "did you mean `optimizer.lr`?"),
        (KF_7B, "distributed.tensor_parallel", "did you mean `distributed.tp`?"),
        (SPECFORGE, "training.lr", "did you mean `training.learning_rate`?"),
        (KF_7B, "optimizer.momentum_thing", "the keys of `optimizer` are `betas`, `eps`, "),
        (KF_7B, "nothing.like.it", "the top-level sections are `adapter`, "),
    ],
)
def test_every_unknown_set_path_gets_a_suggestion(capsys, config, path, said):
    (line,) = errors(capsys, "check", "--isolated", str(config), "--set", f"{path}=1")
    assert f"`{path}` is not a config path; " in line and said in line
