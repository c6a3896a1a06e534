"""The result cache of `trainspec check`: a second run over unchanged files checks none of them and prints
the same; anything its key holds, changed, is checked again; a pack it cannot trust is a miss."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import trainspec
import trainspec.spec
from trainspec.cli import main
from trainspec.engine import cache, cache_codec, cache_run, cache_store, runner
from trainspec.engine.cache_store import Pack, Store
from trainspec.families import get_family
from trainspec.spec.diagnostics import Diagnostic, Related, SetValue, Severity
from trainspec.spec.result import Outcome, Result

from .conftest import CORPUS, ROOT

SRC = str(ROOT / "src")
KEMPNERFORGE = sorted((CORPUS / "kempnerforge" / "train").glob("*.toml"))[:3]
SPECFORGE = sorted((CORPUS / "specforge").glob("*.yaml"))[:2]
FORMATS = ("text", "json", "github", "sarif", "junit")


def check(capsys, *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    out, _ = capsys.readouterr()
    return code, out


@pytest.fixture
def per_file(monkeypatch) -> None:
    """No run is answered from a whole run's record (`cache_run`): the packs answer for each file."""
    monkeypatch.setattr(cache_run, "replay", lambda *args, **kwargs: None)


@pytest.fixture
def configs(tmp_path) -> list[str]:
    """Six configs in one folder: KempnerForge TOML, SpecForge YAML and JSON, and one with mistakes."""
    folder = tmp_path / "configs"
    folder.mkdir()
    for source in [*KEMPNERFORGE, *SPECFORGE]:
        (folder / source.name).write_text(source.read_text())
    data = trainspec_yaml(SPECFORGE[0])
    (folder / "run.json").write_text(json.dumps(data, indent=2))
    broken = (ROOT / "examples" / "broken_kempnerforge.toml").read_text()
    (folder / "broken.toml").write_text(broken)
    return sorted(str(p) for p in folder.iterdir())


def trainspec_yaml(path: Path) -> dict:
    from trainspec.read.files import parse

    return parse(str(path), path.read_text()).data


def cache_root() -> Path:
    return Path(os.environ["TRAINSPEC_CACHE_DIR"])


def packs() -> list[Path]:
    return sorted((cache_root() / f"v{cache_store.FORMAT}").glob("*.json"))


# -- hits and misses ------------------------------------------------------------------------------------


def test_a_second_run_checks_no_file_and_prints_the_same(capsys, checked, configs):
    first = check(capsys, *configs)
    assert sorted(checked) == configs
    assert len(packs()) == 1  # one folder, one pack
    checked.clear()
    second = check(capsys, *configs)
    assert checked == []
    assert second == first
    assert first[0] == 1 and "broken.toml" in first[1]


def test_the_store_counts_what_it_read_and_wrote(configs):
    options = runner.Options(family=None, use_project=True)
    store = cache.store()
    assert store is not None
    first = list(cache.iter_cached(configs, options, 1, store=store))
    assert (store.read_packs, store.hits, store.stored) == (0, 0, len(configs))
    again = cache.store()
    assert again is not None
    second = list(cache.iter_cached(configs, options, 1, store=again))
    assert (again.read_packs, again.hits, again.stored) == (1, len(configs), 0)
    assert [r.for_report() for r in first] == second


def _byte(files: list[str], tmp: Path) -> tuple[list[str], list[str]]:
    Path(files[0]).write_text(Path(files[0]).read_text() + "\n# one more line\n")
    return [], files[:1]


def _project(files: list[str], tmp: Path) -> tuple[list[str], list[str]]:
    from trainspec.read.project import forget_projects

    (tmp / "configs" / ".trainspec.toml").write_text('[[configs]]\npaths = ["*.toml"]\nworld-size = 16\n')
    forget_projects()  # as a new process would (this one remembers the folder had none)
    return [], files


def _version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainspec.spec, "__version__", trainspec.spec.__version__ + ".post1")


def _limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_MAX_DIAGNOSTICS", "500")


def _installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_IGNORE_INSTALLED", "0")


@pytest.mark.parametrize(
    ("change", "args"),
    [
        ("a changed byte", ()),
        ("the project configuration", ()),
        ("trainspec's version", ()),
        ("a limit", ()),
        ("the installed-release lookup", ()),
        ("the world size", ("--world-size", "16")),
        ("several world sizes", ("--world-size", "8,16")),
        ("an override", ("--set", "train.seed=7")),
        ("a KempnerForge-style override", ("--train.seed=7",)),
        ("the GPU", ("--gpu", "h100")),
        ("the GPU memory", ("--gpu-memory", "40GiB")),
        ("the family", ("--family", "kempnerforge@5666d0d")),
        ("--select", ("--select", "unknown-key")),
        ("--ignore", ("--ignore", "unknown-key")),
        ("--warnings-as-errors", ("--warnings-as-errors",)),
        ("--isolated", ("--isolated",)),
        ("--skip-unknown", ("--skip-unknown",)),
    ],
)
def test_a_change_in_the_key_checks_again(capsys, checked, configs, tmp_path, monkeypatch, change, args):
    base = ("--world-size", "8") if change in ("the world size", "several world sizes") else ()
    check(capsys, *configs, *base)
    checked.clear()
    expected = configs
    if change == "a changed byte":
        _, expected = _byte(configs, tmp_path)
    elif change == "the project configuration":
        _, expected = _project(configs, tmp_path)
    elif change == "trainspec's version":
        _version(monkeypatch)
    elif change == "a limit":
        _limit(monkeypatch)
    elif change == "the installed-release lookup":
        _installed(monkeypatch)
    cached = check(capsys, *configs, *args)
    assert sorted(checked) == sorted(expected), change
    checked.clear()
    assert check(capsys, "--no-cache", *configs, *args) == cached  # what was checked again is what is printed
    assert len(checked) == len(configs)


def test_the_file_as_named_is_in_the_key(capsys, checked, configs, monkeypatch):
    folder = os.path.dirname(configs[0])
    monkeypatch.chdir(folder)
    names = [os.path.basename(c) for c in configs]
    check(capsys, *names)
    checked.clear()
    _, out = check(capsys, *(f"./{n}" for n in names))
    assert len(checked) == len(names)  # reports name the file as given: ./a.toml is not a.toml
    assert "./broken.toml" in out


def test_text_piped_in_is_cached_by_its_text(capsys, checked, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "examples" / "broken_kempnerforge.toml").read_bytes()
    outputs = []
    for piped in (text, text, text + b"\n"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(piped)))
        outputs.append(check(capsys, "-", "--stdin-filename", "job.toml"))
    assert checked == ["job.toml", "job.toml"]  # the second is the first again; the third has a byte more
    assert outputs[0] == outputs[1] and outputs[0][0] == 1


def test_hits_misses_and_skipped_files_come_out_in_order(capsys, checked, configs, tmp_path):
    folder = tmp_path / "configs"
    (folder / "package.json").write_text('{"name": "not a config"}\n')  # a walk skips it: no family claims it
    check(capsys, str(folder))
    Path(configs[2]).write_text(Path(configs[2]).read_text() + "\n")
    Path(configs[5]).write_text(Path(configs[5]).read_text() + "\n")
    checked.clear()
    cached = check(capsys, str(folder))
    assert sorted(checked) == sorted([configs[2], configs[5]])
    assert cached == check(capsys, "--no-cache", str(folder))
    assert "1 skipped" in cached[1]


def test_many_files_are_checked_in_workers_and_cached_alike(capsys, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    text = (ROOT / "examples" / "broken_kempnerforge.toml").read_text()
    for n in range(runner.PARALLEL_MIN_FILES + 20):
        (folder / f"job{n:03d}.toml").write_text(text if n % 3 else text.replace("dim", "dimm", 1))
    first = check(capsys, "--jobs", "2", str(folder))
    store = cache.store()
    assert store is not None
    files = sorted(str(p) for p in folder.iterdir())
    options = runner.Options(use_project=True, fallback_sizes=True, expanded=frozenset(files))  # as the command's
    list(cache.iter_cached(files, options, 2, store=store))
    assert store.hits == len(files) and store.stored == 0
    assert check(capsys, str(folder)) == first == check(capsys, "--no-cache", str(folder))


# -- what is never stored ---------------------------------------------------------------------------------


def test_a_symbolic_link_is_checked_every_time(capsys, checked, configs, tmp_path):
    link = tmp_path / "configs" / "link.toml"
    link.symlink_to(configs[0])
    check(capsys, str(link))
    check(capsys, str(link))
    assert checked == [str(link), str(link)]


def test_a_crashed_check_is_not_stored(capsys, checked, configs, monkeypatch):
    from trainspec.engine import pipeline

    def broken(*args: object, **kwargs: object) -> Result:
        raise RuntimeError("a bug")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "_check", broken)
        code, out = check(capsys, configs[0])
    assert code == 1 and "internal-error" in out
    checked.clear()
    code, out = check(capsys, configs[0])
    assert checked == [configs[0]] and "internal-error" not in out


def test_a_rule_that_raised_is_not_stored():
    raised = Diagnostic("f", None, None, (), "some-rule", Severity.ERROR, "rule some-rule failed on this config (X: y)")
    hook = Diagnostic("f", None, None, (), "hook-failed", Severity.ERROR, "the normalizer of family x failed")
    fine = Diagnostic("f", 1, 1, (), "unknown-key", Severity.ERROR, "unknown key `x`")
    family = get_family("kempnerforge")
    assert cache.storable(Result("f", family, [fine]))
    assert not cache.storable(Result("f", family, [fine, raised]))
    assert not cache.storable(Result("f", family, [hook]))
    assert not cache.storable(Result("f", None, [fine], outcome=Outcome.CRASHED))


def test_a_file_over_the_size_limit_is_not_stored(capsys, checked, configs, monkeypatch):
    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", "100")
    check(capsys, configs[0])
    check(capsys, configs[0])
    assert checked == [configs[0], configs[0]]


def test_a_config_checked_as_an_overlay_is_not_stored(capsys, checked, configs, tmp_path):
    overlay = tmp_path / "acme.json"
    overlay.write_text(json.dumps({"family": "kempnerforge@5666d0d", "name": "acme"}))
    first = check(capsys, "--overlay", str(overlay), configs[0])
    overlay.write_text(json.dumps({"family": "kempnerforge@5666d0d", "name": "acme", "registries": {"a.b": ["c"]}}))
    second = check(capsys, "--overlay", str(overlay), configs[0])
    assert checked == [configs[0], configs[0]] and first == second
    assert packs() == []


def test_a_project_configuration_changed_back_finds_its_results_again(capsys, checked, configs, tmp_path):
    from trainspec.read.project import forget_projects

    project = tmp_path / "configs" / ".trainspec.toml"
    outputs = []
    for text in ("world-size = 8\n", "world-size = 0\n", "world-size = 16\n", "world-size = 8\n"):
        project.write_text(text)
        forget_projects()
        outputs.append(check(capsys, configs[0]))
    assert outputs[1][0] == 2 and "world size 16" in outputs[2][1] and outputs[3] == outputs[0]
    assert checked == [configs[0], configs[0]]  # at 8 and at 16; none at 0 (unusable), none at 8 again


# -- packs that cannot be trusted ---------------------------------------------------------------------------


def _truncated(pack: Path) -> None:
    pack.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])


def _not_json(pack: Path) -> None:
    pack.write_bytes(b"\x80\x81 not json")


def _other_context(pack: Path) -> None:
    data = json.loads(pack.read_text())
    data["context"] = "0" * 40
    pack.write_text(json.dumps(data))


def _symlinked(pack: Path) -> None:
    copy = pack.with_name("elsewhere")
    pack.rename(copy)
    pack.symlink_to(copy)


def _a_folder(pack: Path) -> None:
    pack.unlink()
    pack.mkdir()


def _deep(pack: Path) -> None:
    pack.write_text('{"format": 1, "entries": ' + "[" * 100_000 + "]" * 100_000 + "}")


@pytest.mark.parametrize("spoil", [_truncated, _not_json, _other_context, _symlinked, _a_folder, _deep])
def test_a_pack_that_cannot_be_used_is_a_miss(capsys, checked, configs, per_file, spoil):
    first = check(capsys, *configs)
    (pack,) = packs()
    spoil(pack)
    checked.clear()
    assert check(capsys, *configs) == first
    assert sorted(checked) == configs


def _entry(field: int, value: object):
    def spoil(result: list) -> None:
        diagnostic = next(d for d in result[8])
        diagnostic[field] = value

    return spoil


@pytest.mark.parametrize(
    "spoil",
    [
        _entry(1, True),  # a line that is a bool
        _entry(1, "3"),
        _entry(3, [1.5]),  # a path part that is neither text nor a number
        _entry(5, "fatal"),  # no such severity
        _entry(6, None),
        _entry(8, [["x"]]),  # a related place of the wrong shape
        _entry(12, ["delete", []]),  # no such suggestion
        _entry(13, [["text", "sideways"]]),  # no such clause position
        lambda result: result.append(1),
        lambda result: result.__setitem__(1, "fine"),  # no such outcome
        lambda result: result.__setitem__(0, "nosuchfamily@1"),
        lambda result: result.__setitem__(7, [[1, 2]]),  # a quoted line that is not text
        lambda result: result.__setitem__(8, [[None] * 14]),
    ],
)
def test_an_entry_of_the_wrong_shape_is_a_miss(capsys, checked, configs, per_file, spoil):
    broken = next(c for c in configs if c.endswith("broken.toml"))
    first = check(capsys, *configs)
    (pack,) = packs()
    data = json.loads(pack.read_text())
    entry = data["entries"][broken]
    result = json.loads(entry[cache_store.KEY_LENGTH :])
    spoil(result)
    data["entries"][broken] = entry[: cache_store.KEY_LENGTH] + json.dumps(result)
    pack.write_text(json.dumps(data))
    checked.clear()
    assert check(capsys, *configs) == first
    assert checked == [broken]


def test_an_entry_for_another_key_is_not_taken(configs):
    pack = Pack("p", {configs[0]: "a" * cache_store.KEY_LENGTH + "[]"})
    assert pack.get(configs[0], "a" * cache_store.KEY_LENGTH) == "[]"
    assert pack.get(configs[0], "b" * cache_store.KEY_LENGTH) is None
    assert pack.get(configs[1], "a" * cache_store.KEY_LENGTH) is None
    assert Pack("p", {configs[0]: ["a" * 40, "[]"]}).get(configs[0], "a" * 40) is None


def test_a_result_round_trips_exactly_or_is_not_stored():
    family = get_family("kempnerforge")
    related = (Related(("model", "dim"), 3, 1, 3, 4, "dim = 5"),)
    d = Diagnostic("f", 2, 1, ("model", 0), "r", Severity.WARNING, "t", "o", related, 8, 2, 5, SetValue(("a",), 1))
    result = Result("f", family, [d], world_size=8, lines={2: "x = 1"}, world_sizes=(8, 16))
    back = cache_codec.decode(cache_codec.encode(result), "f", get_family)
    assert cache_codec.same(back, result)
    for value, kept in ((1.0, True), (True, True), ((1, 2), False), (float("nan"), False)):
        fix = SetValue((), value)
        other = Result("f", family, [Diagnostic("f", 1, 1, (), "r", Severity.ERROR, "t", suggestion=fix)])
        assert cache_codec.same(cache_codec.decode(cache_codec.encode(other), "f", get_family), other) is kept, value
    with pytest.raises(cache_store.Uncachable):
        cache_codec.encode(
            Result("f", None, [Diagnostic("f", 1, 1, (), "r", Severity.ERROR, "t", suggestion=SetValue((), {1}))])
        )


# -- --no-cache ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_no_cache_neither_reads_nor_writes(capsys, checked, configs, monkeypatch, how):
    args = ["--no-cache"] if how == "flag" else []
    if how == "environment":
        monkeypatch.setenv("TRAINSPEC_NO_CACHE", "1")
    first = check(capsys, *args, *configs)
    assert list(cache_root().iterdir()) == []  # nothing written
    monkeypatch.delenv("TRAINSPEC_NO_CACHE", raising=False)
    check(capsys, *configs)
    (pack,) = packs()
    before = (pack.read_bytes(), pack.stat().st_mtime_ns)
    checked.clear()
    if how == "environment":
        monkeypatch.setenv("TRAINSPEC_NO_CACHE", "1")
    assert check(capsys, *args, *configs) == first
    assert sorted(checked) == configs  # nothing read
    assert (pack.read_bytes(), pack.stat().st_mtime_ns) == before


# -- output with and without the cache -------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [(), ("--world-size", "8"), ("--gpu", "a100-40gb", "--warnings-as-errors"), ("--select", "unknown-key,world-size")],
    ids=["project", "world-size", "gpu", "select"],
)
def test_every_format_prints_the_same_with_and_without_the_cache(capsys, monkeypatch, options):
    monkeypatch.chdir(ROOT)  # the repository's project configuration governs the examples
    paths = ["examples", "examples/broken_kempnerforge.toml", "tests/corpus", *options]
    filled = check(capsys, *paths)
    assert filled == check(capsys, "--no-cache", *paths)
    for name in FORMATS:
        uncached = check(capsys, "--no-cache", "--format", name, *paths)
        assert check(capsys, "--format", name, *paths) == uncached, name
    uncached = check(capsys, "--no-cache", "--color", "always", *paths)  # source excerpts, from the lines kept
    assert check(capsys, "--color", "always", *paths) == uncached
    assert "|" in uncached[1] and "^" in uncached[1]


# -- concurrent runs -------------------------------------------------------------------------------------------


def _writer(root: str, name: str, which: int, rounds: int) -> None:
    store = Store(Path(root))
    for n in range(rounds):
        pack = Pack(name, {})
        for m in range(50):
            pack.put(f"file{which}-{m}", f"{which:02d}{n:038d}", json.dumps([which, n, m, "x" * 200]))
        store.save([pack], "context")


def test_two_writers_never_leave_a_broken_pack(tmp_path):
    root = tmp_path / "store"
    fork = multiprocessing.get_context("fork")
    writers = [fork.Process(target=_writer, args=(str(root), "shared", w, 60)) for w in (1, 2)]
    for w in writers:
        w.start()
    reader = Store(root)
    seen = 0
    while any(w.is_alive() for w in writers):
        pack = reader.load("shared", "context")
        for file, entry in pack.entries.items():
            assert isinstance(entry, str) and json.loads(entry[cache_store.KEY_LENGTH :])[0] == int(file[4])
        seen += bool(pack.entries)
    for w in writers:
        w.join()
        assert w.exitcode == 0
    final = json.loads(reader.path("shared").read_text())
    assert final["format"] == cache_store.FORMAT and final["entries"]
    assert list(reader.folder.glob("*.tmp")) == []


def test_two_runs_at_once_print_what_one_run_prints(capsys, configs, tmp_path):
    expected = check(capsys, "--no-cache", *configs)[1]
    env = {**os.environ, "PYTHONPATH": SRC}
    command = [sys.executable, "-m", "trainspec", "check", *configs]
    for _ in range(3):
        runs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
        outputs = [run.communicate(timeout=120)[0] for run in runs]
        assert outputs == [expected, expected]
        for pack in packs():
            json.loads(pack.read_text())
    store = cache.store()
    assert store is not None
    list(cache.iter_cached(configs, runner.Options(use_project=True, fallback_sizes=True), 1, store=store))
    assert store.hits == len(configs)  # the runs wrote what this process (with the command's options) finds


# -- the folder, and its size ------------------------------------------------------------------------------------


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_store.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("TRAINSPEC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_store.cache_dir() == tmp_path / "xdg" / "trainspec"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # to be ignored, says the XDG specification
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_store.cache_dir() == tmp_path / "home" / ".cache" / "trainspec"


def test_the_cache_is_not_written_inside_the_checked_repository(capsys, monkeypatch, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.toml").write_text((ROOT / "examples" / "broken_kempnerforge.toml").read_text())
    monkeypatch.delenv("TRAINSPEC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.chdir(repo)
    check(capsys, "job.toml")
    assert sorted(p.name for p in repo.iterdir()) == ["job.toml"]
    assert (tmp_path / "user-cache" / "trainspec" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f59")


def test_an_unwritable_cache_folder_costs_only_the_cache(capsys, checked, configs, monkeypatch, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(blocked))
    first = check(capsys, *configs)
    assert check(capsys, *configs) == first and len(checked) == 2 * len(configs)


def test_the_oldest_packs_are_pruned_first(tmp_path):
    store = Store(tmp_path)
    store.folder.mkdir(parents=True)
    now = time.time()
    for n in range(10):
        path = store.path(f"pack{n}")
        path.write_text("x" * 1000)
        os.utime(path, (now - 100 + n, now - 100 + n))
    leftover = store.folder / ".pack0.1.dead.tmp"
    leftover.write_text("half")
    os.utime(leftover, (now - 2 * cache_store.STALE_TEMPORARY, now - 2 * cache_store.STALE_TEMPORARY))
    store.prune(max_packs=5, max_bytes=10**9)
    assert sorted(p.stem for p in store.folder.glob("*.json")) == [f"pack{n}" for n in range(6, 10)]
    assert not leftover.exists()
    store.prune(max_packs=100, max_bytes=2500)
    assert sorted(p.stem for p in store.folder.glob("*.json")) == ["pack8", "pack9"]


def test_a_used_pack_is_kept_over_an_older_one(capsys, configs, per_file, tmp_path):
    check(capsys, *configs)
    (pack,) = packs()
    os.utime(pack, (1, 1))
    check(capsys, *configs)  # every result taken from it: marked used
    assert pack.stat().st_mtime > 1


def test_installed_distributions_are_in_the_key(monkeypatch, tmp_path):
    options = runner.Options()
    before = cache.context(options)
    (tmp_path / "sometrainer-1.2.dist-info").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    cache._installation.cache_clear()
    try:
        assert cache.context(options) != before
    finally:
        cache._installation.cache_clear()
