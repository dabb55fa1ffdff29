"""save_curated / push_curated: provenance cards, configs added without touching others, no network."""

from __future__ import annotations

import logging
import os
import shutil
import types
from pathlib import Path

import datasets
import pytest

import hf_synthsample
from hf_synthsample import HomogenizeSampler
from hf_synthsample.hub import read_card_metadata
from hf_synthsample.hub import Provenance, push_curated, save_curated

TOKEN = "hf_SECRETsecretSECRETsecret123"


@pytest.fixture
def curated(cache_dir):
    pool = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=600, seed=2, cache_dir=cache_dir)["train"]
    sampler = HomogenizeSampler("num_ops", seed=5)
    subset = sampler.sample(pool, 120)
    provenance = Provenance.from_sampler(
        pool, sampler, source="hf_synthsample:calculator/dcfg", source_config={"num_examples": 600, "seed": 2}
    )
    return pool, sampler, subset, provenance


def test_provenance_records_the_selection(curated):
    pool, sampler, _, provenance = curated
    assert provenance.source_fingerprint == pool._fingerprint and provenance.source_size == 600
    assert provenance.sampler == "HomogenizeSampler" and provenance.seed == 5
    assert provenance.sampler_params["columns"] == ["num_ops"]
    with pytest.raises(ValueError, match="source"):
        Provenance(source="")


def test_save_curated_round_trip_and_keeps_other_configs(curated, tmp_path):
    pool, sampler, subset, provenance = curated
    folder = tmp_path / "curated"
    plot = sampler.report_.plot(str(tmp_path / "p.png"))
    save_curated(subset, folder, provenance, config_name="uniform-ops",
                 statistics=sampler.report_.to_markdown(), plots={"num_ops": plot})
    other = pool.select(range(50))
    save_curated(other, folder, Provenance(source="first-50"), config_name="head")
    assert datasets.load_dataset(str(folder), "uniform-ops")["train"].to_list() == subset.to_list()
    assert datasets.load_dataset(str(folder), "head")["train"].num_rows == 50
    meta = read_card_metadata(folder)
    assert [c["config_name"] for c in meta["configs"]] == ["uniform-ops", "head"]
    record = meta["hf_synthsample"]["curated"]["uniform-ops"]
    assert record["source_fingerprint"] == pool._fingerprint and record["seed"] == 5
    assert record["sizes"] == {"train": 120} and record["sampler_params"]["columns"] == ["num_ops"]
    card = (folder / "README.md").read_text()
    assert "Curated config `uniform-ops`" in card and "Curated config `head`" in card and "KL before" in card
    assert (folder / "plots" / "uniform-ops-num_ops.png").exists()
    # re-saving a config replaces its section, not the others'
    save_curated(other.select(range(10)), folder, Provenance(source="first-10"), config_name="head")
    card = (folder / "README.md").read_text()
    assert card.count("Curated config `head`") == 1 and "first-10" in card and "first-50" not in card
    assert datasets.load_dataset(str(folder), "uniform-ops")["train"].num_rows == 120


HEAD = "a" * 40


class FakeHubApi:
    """Records calls; serves a repo whose files are those of the local folder ``root`` (by default
    a README, config `other` and a stale file of config `mine`)."""

    def __init__(self, root: Path, exists: bool = True, files: list[str] | None = None):
        self.root, self.exists, self.calls = root, exists, []
        self.files = files if files is not None else [
            "README.md", "other/train-00000-of-00001.parquet", "mine/train-00000-of-00002.parquet"]

    def repo_exists(self, repo_id, repo_type=None, token=None):
        self.calls.append(("repo_exists", repo_id, repo_type))
        return self.exists

    def repo_info(self, repo_id, repo_type=None, token=None):
        self.calls.append(("repo_info", repo_id, repo_type))
        return types.SimpleNamespace(sha=HEAD)

    def list_repo_files(self, repo_id, repo_type=None, revision=None, token=None):
        self.calls.append(("list_repo_files", repo_id, revision))
        return list(self.files)

    def hf_hub_download(self, repo_id, filename, repo_type=None, revision=None, token=None):
        self.calls.append(("hf_hub_download", repo_id, filename, revision))
        return str(self.root / "README.md")

    def create_repo(self, repo_id, repo_type=None, private=None, exist_ok=False, token=None):
        self.calls.append(("create_repo", repo_id, repo_type, private))

    def create_commit(self, repo_id, operations, commit_message, repo_type=None, token=None, parent_commit=None):
        self.calls.append(("create_commit", repo_id, repo_type, parent_commit))
        self.operations = operations
        self.contents = {op.path_in_repo: Path(op.path_or_fileobj).read_bytes() for op in operations
                         if hasattr(op, "path_or_fileobj")}
        self.readme = next(Path(op.path_or_fileobj).read_text() for op in operations
                           if getattr(op, "path_in_repo", "") == "README.md" and hasattr(op, "path_or_fileobj"))
        return "commit-info"


def test_push_adds_a_config_without_touching_others(curated, tmp_path, caplog):
    _, _, subset, provenance = curated
    existing = tmp_path / "existing"
    save_curated(subset.select(range(5)), existing, Provenance(source="older"), config_name="other")
    api = FakeHubApi(existing)
    # hf_synthsample's loggers have their own level (hf_synthsample.logging): lower it too
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="hf_synthsample"):
        out = push_curated(subset, "someone/curated", provenance=provenance, config_name="mine", token=TOKEN, api=api)
    assert out == "commit-info"
    assert [c[0] for c in api.calls] == ["repo_exists", "repo_info", "list_repo_files", "hf_hub_download", "create_commit"]
    # what was read and what is written on top of it are the same commit
    assert api.calls[2][2] == api.calls[3][3] == api.calls[4][3] == HEAD
    added = sorted(op.path_in_repo for op in api.operations if type(op).__name__ == "CommitOperationAdd")
    deleted = sorted(op.path_in_repo for op in api.operations if type(op).__name__ == "CommitOperationDelete")
    assert added[0] == "README.md" and len(added) == 2 and added[1].startswith("mine/train-00000-of-00001-")
    assert deleted == ["mine/train-00000-of-00002.parquet"]  # the stale file of this config only
    assert "Curated config `other`" in api.readme and "Curated config `mine`" in api.readme
    assert "config_name: other" in api.readme and "config_name: mine" in api.readme
    assert TOKEN not in api.readme and TOKEN not in caplog.text


def test_push_to_a_new_repo_creates_it(curated, tmp_path):
    _, _, subset, provenance = curated
    api = FakeHubApi(tmp_path, exists=False)
    push_curated(subset, "someone/new", provenance=provenance, token=TOKEN, private=True, api=api)
    assert api.calls[1] == ("create_repo", "someone/new", "dataset", True)
    paths = [op.path_in_repo for op in api.operations]
    assert paths[0] == "README.md" and len(paths) == 2 and paths[1].startswith("default/train-00000-of-00001-")


@pytest.mark.parametrize(
    "repo_id, token, match",
    [("not a repo id!", TOKEN, "repo_id"), ("no-namespace", TOKEN, "namespace/name"), ("someone/x", None, "token")],
)
def test_push_rejects_bad_input_before_any_call(curated, tmp_path, monkeypatch, repo_id, token, match):
    _, _, subset, provenance = curated
    monkeypatch.setattr("huggingface_hub.utils.get_token", lambda: None)
    api = FakeHubApi(tmp_path)
    with pytest.raises(ValueError, match=match):
        push_curated(subset, repo_id, provenance=provenance, token=token, api=api)
    assert api.calls == []
    with pytest.raises(ValueError, match="empty"):
        push_curated(subset.select([]), "someone/x", provenance=provenance, token=TOKEN, api=api)
    with pytest.raises(TypeError, match="Provenance"):
        push_curated(subset, "someone/x", provenance={"source": "x"}, token=TOKEN, api=api)
    assert api.calls == []


def test_report_objects_as_statistics(curated, tmp_path):
    """Reports go into the card as Markdown and into the YAML as numbers; junk is refused first."""
    pool, sampler, subset, provenance = curated
    diversity = hf_synthsample.diversity_report(subset, pool, name="homogenized", program_column="expression",
                                                language="calculator")
    folder = tmp_path / "c"
    save_curated(subset, folder, provenance, config_name="ops", statistics=[diversity, sampler.report_])
    record = read_card_metadata(folder)["hf_synthsample"]["curated"]["ops"]
    assert [s["report"] for s in record["statistics"]] == ["DiversityReport", "HomogenizationReport"]
    assert record["statistics"][0]["num_templates"] == diversity.num_templates
    card = (folder / "README.md").read_text()
    assert diversity.to_markdown().strip() in card and "KL before" in card
    with pytest.raises(TypeError, match="statistics must be Markdown text, a report"):
        save_curated(subset, tmp_path / "bad", provenance, statistics=42)
    assert not (tmp_path / "bad").exists()


def apply_commit(repo: Path, api: FakeHubApi) -> Path:
    """The repo's files after the commit (a local mirror, to load the way the Hub would)."""
    for op in api.operations:
        if type(op).__name__ == "CommitOperationDelete":
            (repo / op.path_in_repo).unlink()
        else:
            (repo / op.path_in_repo).parent.mkdir(parents=True, exist_ok=True)
            (repo / op.path_in_repo).write_bytes(api.contents[op.path_in_repo])
    return repo


def test_push_into_a_repo_of_automatically_found_data_keeps_it_reachable(curated, tmp_path):
    """A repo with data/train-*.parquet and a card without `configs:`: the Hub finds the data itself;
    the new card's `configs:` must list it (as `default`), or only the new config is shown."""
    _, _, subset, provenance = curated
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    subset.select(range(30)).to_parquet(str(repo / "data" / "train-00000-of-00001.parquet"))
    (repo / "README.md").write_text("---\nlicense: mit\n---\n# Someone's data\n")
    files = ["README.md", ".gitattributes", "data/train-00000-of-00001.parquet"]
    before = datasets.load_dataset(str(repo))["train"].to_list()
    api = FakeHubApi(repo, files=files)
    push_curated(subset, "someone/data", provenance=provenance, config_name="mine", token=TOKEN, api=api)
    apply_commit(repo, api)
    meta = read_card_metadata(repo)
    assert [c["config_name"] for c in meta["configs"]] == ["default", "mine"] and meta["configs"][0]["default"]
    assert meta["license"] == "mit" and "# Someone's data" in api.readme
    assert datasets.load_dataset(str(repo))["train"].to_list() == before
    assert datasets.load_dataset(str(repo), "mine")["train"].to_list() == subset.to_list()
    # the existing data is not named: a config called `default` would replace it
    with pytest.raises(ValueError, match="choose another config name"):
        push_curated(subset, "someone/data2", provenance=provenance, config_name="default", token=TOKEN,
                     api=FakeHubApi(tmp_path / "repo2", files=files[2:]))


def test_push_card_size_counts_every_config(curated, tmp_path):
    """2,000 rows in `other` + 120 pushed: 1K<n<10K (the card used to count the pushed config only)."""
    pool, _, subset, provenance = curated
    existing = tmp_path / "existing"
    big = datasets.concatenate_datasets([pool] * 4).select(range(2_000))
    save_curated(big, existing, Provenance(source="older"), config_name="other")
    assert read_card_metadata(existing)["size_categories"] == ["1K<n<10K"]
    api = FakeHubApi(existing)
    push_curated(subset, "someone/curated", provenance=provenance, config_name="mine", token=TOKEN, api=api)
    assert "- 1K<n<10K" in api.readme
    # sizes the card does not record (data found automatically): never below what the card said
    repo = tmp_path / "auto"
    (repo / "data").mkdir(parents=True)
    big.to_parquet(str(repo / "data" / "train.parquet"))
    (repo / "README.md").write_text("---\nsize_categories:\n- 1K<n<10K\n---\n")
    api = FakeHubApi(repo, files=["README.md", "data/train.parquet"])
    push_curated(subset, "someone/auto", provenance=provenance, config_name="mine", token=TOKEN, api=api)
    assert "- 1K<n<10K" in api.readme


def test_push_commits_on_top_of_the_head_it_read(curated, tmp_path):
    from huggingface_hub.utils import HfHubHTTPError

    _, _, subset, provenance = curated
    existing = tmp_path / "existing"
    save_curated(subset.select(range(5)), existing, Provenance(source="older"), config_name="other")
    api = FakeHubApi(existing)
    pinned = "b" * 40
    push_curated(subset, "someone/c", provenance=provenance, config_name="mine", token=TOKEN, api=api, parent_commit=pinned)
    assert "repo_info" not in [c[0] for c in api.calls]
    assert [c[-1] for c in api.calls if c[0] in ("list_repo_files", "hf_hub_download", "create_commit")] == [pinned] * 3
    with pytest.raises(ValueError, match="parent_commit must be a full commit sha"):
        push_curated(subset, "someone/c", provenance=provenance, token=TOKEN, api=api, parent_commit="main")

    class MovedHead(FakeHubApi):  # another push landed between our read and our commit
        def create_commit(self, *args, **kwargs):
            raise HfHubHTTPError("412 Precondition Failed", response=types.SimpleNamespace(status_code=412, headers={}, request=None))

    with pytest.raises(RuntimeError, match="changed since commit a{40}.*Push again"):
        push_curated(subset, "someone/c", provenance=provenance, config_name="mine", token=TOKEN, api=MovedHead(existing))


def test_curated_cards_hold_no_absolute_local_paths(curated, tmp_path):
    pool, sampler, subset, _ = curated
    secret = str(tmp_path / "home" / "alice-private" / "pools" / "pool.parquet")
    provenance = Provenance.from_sampler(pool, sampler, source=secret, source_config={"data_dir": os.path.dirname(secret)})
    folder = save_curated(subset, tmp_path / "out", provenance, config_name="c")
    card = (folder / "README.md").read_text()
    assert "alice-private" not in card and "<local>/pool.parquet" in card and "data_dir='<local>/pools'" in card
    assert read_card_metadata(folder)["hf_synthsample"]["curated"]["c"]["source_config"] == {"data_dir": "<local>/pools"}
    assert provenance.source == secret  # the object itself is not changed


# ----------------------------------------------------------------------------- no network (issue 33)
class UnreachableHubApi(FakeHubApi):
    """Every call fails as huggingface_hub's HTTP client does without a network."""

    def repo_exists(self, repo_id, repo_type=None, token=None):
        self.calls.append(("repo_exists", repo_id, repo_type))
        import importlib

        for name in ("httpx2", "httpx"):
            try:
                raise importlib.import_module(name).ConnectError("[Errno -2] Name or service not known")
            except ImportError:
                continue
        raise ConnectionError("[Errno -2] Name or service not known")


def test_push_without_a_network_names_the_hub_and_the_repo(curated, tmp_path):
    _, _, subset, provenance = curated
    api = UnreachableHubApi(tmp_path)
    with pytest.raises(ConnectionError, match=r"cannot reach the Hugging Face Hub \(https://.*\) to push dataset repo "
                                              r"'someone/x': ConnectError.*Nothing was uploaded.*hf upload someone/x"):
        push_curated(subset, "someone/x", provenance=provenance, token=TOKEN, api=api)
    assert api.calls == [("repo_exists", "someone/x", "dataset")]  # one try, no retry loop


def test_push_in_offline_mode_fails_before_any_call(curated, monkeypatch):
    _, _, subset, provenance = curated
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ConnectionError, match="Hugging Face Hub .* dataset repo 'someone/x': HF_HUB_OFFLINE is set"):
        push_curated(subset, "someone/x", provenance=provenance, token=TOKEN)


@pytest.mark.parametrize("repo_id, where", [("./curated", "a local path"), ("/data/out/curated", "a local path"),
                                            ("{tmp}", "an existing local path")])
def test_push_to_a_local_path_says_so(curated, tmp_path, repo_id, where):
    _, _, subset, provenance = curated
    api = FakeHubApi(tmp_path)
    with pytest.raises(ValueError, match=f"repo_id: .* is {where}.*not a Hub repo id.*save_curated"):
        push_curated(subset, repo_id.format(tmp=tmp_path), provenance=provenance, token=TOKEN, api=api)
    assert api.calls == []
