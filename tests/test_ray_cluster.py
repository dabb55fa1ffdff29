"""A real two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: a head and one more
node, one CPU each): generation gives the rows of one process and the same on both nodes, and an MCD
split's structure extraction runs there, a language built in the driver included.

Offline, CPU only; the cluster's processes are shut down in the fixture's finalizer.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'hf-synthsample[ray]'")
pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'hf-synthsample[ray]'")
cluster_utils = pytest.importorskip("ray.cluster_utils", reason="this Ray has no ray.cluster_utils.Cluster")

import datasets  # noqa: E402
import pyarrow as pa  # noqa: E402

import hf_synthsample  # noqa: E402
from hf_synthsample.engines import ray as hr  # noqa: E402

pytestmark = pytest.mark.slow

PARAMS = dict(num_examples=1_200, block_size=100, seed=5)


@pytest.fixture(scope="module")
def two_nodes():
    """A head and a second node (``num_cpus=1`` each) joined by this process; shut down after."""
    if ray.is_initialized():  # a runtime of the session's own (another module's): not ours to replace
        pytest.skip("Ray already runs in this process; the two-node cluster needs a fresh driver")
    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    sigterm = signal.getsignal(signal.SIGTERM)  # ray.init's handler must not outlive the module (conftest)
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        assert hr.start_ray(address=cluster.address, log_to_driver=False, warm=False) is True
        warmed = ray.get(hr.warm_workers())  # one worker per CPU imports the library: here, one per node
        assert len({node for node, _ in warmed}) == 2
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        signal.signal(signal.SIGTERM, sigterm)


def test_the_cluster_has_two_nodes_and_generation_gives_the_rows_of_one_process(two_nodes, cache_dir):
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2 and ray.cluster_resources()["CPU"] == 2

    def node_of(batch):  # which node generated each row (a closure: pickled by value to the workers)
        time.sleep(0.05)  # long enough that one node alone does not finish every task
        return {"node": [ray.get_runtime_context().get_node_id()] * len(batch["row"])}

    ds = hr.generate("schema2qa", "all", rows_per_task=150, index_column="row", **PARAMS)
    got = [dict(r) for r in hr.map_columns(ds, node_of, input_columns=["row"], batch_size=50).take_all()]
    assert len({r.pop("node") for r in got}) == 2  # both nodes generated rows
    assert [r.pop("row") for r in got] == list(range(1_200))
    ref = hf_synthsample.load_dataset("schema2qa", "all", split="train", cache_dir=cache_dir, **PARAMS)
    assert got == ref.to_list()
    # the default partition (tasks per CPU of the cluster) gives the same rows
    assert [dict(r) for r in hr.generate("schema2qa", "all", **PARAMS).take_all()] == ref.to_list()


def test_mcd_split_structures_extracted_on_the_cluster(two_nodes, cache_dir):
    from hf_synthsample.splits import mcd_split
    from hf_synthsample.structure import StructureFunction, get_language

    ref = hf_synthsample.load_dataset("schema2qa", "all", split="train", cache_dir=cache_dir, **PARAMS)
    local = ref.map(StructureFunction("program", "thingtalk"), batched=True)
    remote = hr.structure_columns(hr.generate("schema2qa", "all", **PARAMS), "program", get_language("thingtalk"))
    on_cluster = datasets.Dataset(pa.concat_tables(ray.get(remote.to_arrow_refs())))
    for col in ("template", "atoms", "compounds"):
        assert on_cluster[col] == local[col], col

    # the MCD split from the cluster's structures is the split from the local ones
    kwargs = dict(atoms_column="atoms", compounds_column="compounds", seed=0, max_steps=30, progress=False)
    a = mcd_split(on_cluster, "program", "thingtalk", **kwargs)
    b = mcd_split(local, "program", "thingtalk", **kwargs)
    for split in ("train", "test"):
        assert a[split]["program"] == b[split]["program"]
    assert a["test"].num_rows > 0


def test_languages_made_in_the_driver_reach_the_workers(two_nodes, cache_dir):
    """A ``grammar_language`` registered here only, and a ``Language`` object never registered:
    ``structure_columns`` looks the name up in this process and ships the object."""
    from hf_synthsample.languages.grammar import grammar_language
    from hf_synthsample.structure import Language, Node, StructureFunction

    params = dict(num_examples=400, block_size=100, seed=2)
    ref = hf_synthsample.load_dataset("scan_star", "random", split="train", cache_dir=cache_dir, **params)
    grammar_language("test-cluster-commands", r"""
        start: WORD+
        WORD: /[a-z0-9_]+/
        %ignore " "
    """, register=True)
    words = Language("test-cluster-first-words", lambda text: Node("seq", tuple(Node(w) for w in text.split()[:4])))
    for language in ("test-cluster-commands", words):
        got = hr.structure_columns(hr.generate("scan_star", "random", **params), "commands", language).take_all()
        want = StructureFunction("commands", language)({"commands": ref["commands"]})
        for col in ("template", "atoms", "compounds"):
            assert [list(r[col]) if col != "template" else r[col] for r in got] == want[col], (language, col)
