"""Ray Data engine benchmark: generation and structure columns side by side with ``num_proc=2``
for every generator, and UAT over a 10M-row Schema2QA pool that is never held in memory.

1. ``generation``: for every generator (Calculator ``dcfg``, SCAN ``simple``, SCAN* ``random``,
   Schema2QA ``all``, Karel ``baseline``; rows per generator: ``GEN_ROWS`` times ``--scale``):
   ``hf_synthsample.load_dataset(..., num_proc=2)`` (fresh cache: generate + Arrow files) against
   ``engines.ray.to_hub_folder`` (generate + Parquet Hub folder) on a local ``ray.init(num_cpus=2)``.
2. ``structure``: ``Dataset.map(StructureFunction(column, language), batched=True, num_proc=2)`` on
   the loaded split against ``engines.ray.structure_columns(ds, column, language).materialize()``
   on the same rows generated and materialized on Ray (the input is made before the clock starts).
3. ``pool``: write the ``--pool-rows`` Schema2QA pool as a Hub folder with Ray (once; reused).
4. ``uat``: ``engines.sampling.uat_sample`` of ``--k`` rows from that pool, read column
   ``template`` from the Parquet row groups on Ray (two passes).

Generation and structure interleave the two engines (``datasets``, Ray, ``datasets``, Ray...,
``--repeats`` pairs per generator) so a load swing on a shared machine hits both, and print the
load average with every run; the ratio is ``datasets`` seconds / Ray seconds of each pair (> 1:
Ray is faster), then their median. Ray's runtime start and worker warm-up are timed apart. The
``datasets`` runs happen in a helper process forked before Ray starts: forking a process that runs
Ray (as ``num_proc`` does) can leave Ray's next job waiting forever.

Usage::

    nice -n 5 python benchmarks/bench_engines.py generation structure --repeats 2
    nice -n 5 python benchmarks/bench_engines.py pool uat --pool-dir /tmp/s2q-10m --pool-rows 10000000 --k 120000
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
sys.path.insert(0, os.path.dirname(__file__))

from _measure import Measure  # noqa: E402

#: generator -> (config, rows generated (None: the config's fixed size), structure rows, column, language)
GENERATORS = {
    "calculator": ("dcfg", 1_000_000, 300_000, "expression", "calculator"),
    "scan": ("simple", None, None, "commands", "scan"),
    "scan_star": ("random", 1_000_000, 40_000, "actions", "scan_actions"),
    "schema2qa": ("all", 400_000, 200_000, "program", "thingtalk"),
    "karel": ("baseline", 20_000, 20_000, "program", "karel"),
}


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _params(rows: int | None) -> dict:
    return {"seed": 0} if rows is None else {"num_examples": rows, "seed": 0}


def _rows(n: int | None, scale: float) -> int | None:
    return None if n is None else max(1_000, int(n * scale))


def _karel_program(batch):  # Karel's programs are token lists: the structure languages read text
    return {"program": [" ".join(t) for t in batch["program_tokens"]]}


# ---------------------------------------------------------------------------------- datasets side
def _cpu_here() -> float:
    """CPU seconds of this process and its reaped children (the ``num_proc`` workers)."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def _datasets_job(job: tuple) -> tuple[float, int, float]:
    """In the helper: one ``num_proc`` run, timed; returns (seconds, rows, CPU seconds)."""
    import hf_synthsample
    from hf_synthsample.structure import StructureFunction

    kind, domain, rows, cpus, work = job
    config, _, _, column, language = GENERATORS[domain]
    cache = tempfile.mkdtemp(prefix=f"hf-{domain}-", dir=work)
    try:
        if kind == "generation":
            t, c = time.perf_counter(), _cpu_here()
            ds = hf_synthsample.load_dataset(domain, config, split="train", num_proc=cpus, cache_dir=cache,
                                             **_params(rows))
            return time.perf_counter() - t, ds.num_rows, _cpu_here() - c
        ds = hf_synthsample.load_dataset(domain, config, split="train", num_proc=cpus, cache_dir=cache, **_params(rows))
        if domain == "karel":
            ds = ds.map(_karel_program, batched=True)
        t, c = time.perf_counter(), _cpu_here()
        out = ds.map(StructureFunction(column, language), batched=True, batch_size=1_000, num_proc=cpus)
        return time.perf_counter() - t, out.num_rows, _cpu_here() - c
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _helper(conn) -> None:
    """A process without Ray: runs the ``datasets`` jobs it is sent until ``None``."""
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            conn.send(("ok", _datasets_job(job)))
        except Exception as err:  # pragma: no cover - shown by the caller
            conn.send(("error", repr(err)))


class DatasetsSide:
    """The helper process, forked before Ray starts (see the module)."""

    def __init__(self):
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_helper, args=(child,), daemon=True)
        self.proc.start()

    def run(self, *job) -> tuple[float, int, float]:
        self.conn.send(job)
        status, value = self.conn.recv()
        if status != "ok":
            raise RuntimeError(f"datasets side: {value}")
        return value

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join(timeout=30)


# ---------------------------------------------------------------------------------- Ray side
def start_ray(num_cpus: int) -> float:
    from hf_synthsample.engines import ray as hf_ray

    t = time.perf_counter()
    hf_ray.start_ray(num_cpus=num_cpus, object_store_memory=1_000_000_000, log_to_driver=False, warm=False)
    return time.perf_counter() - t


def _ray_generation(domain: str, rows: int | None, work: str) -> tuple[float, int]:
    import pyarrow.parquet as pq

    from hf_synthsample.engines import ray as hf_ray

    config = GENERATORS[domain][0]
    out = os.path.join(work, f"ray-{domain}")
    t = time.perf_counter()
    hf_ray.to_hub_folder(domain, out, [config], **_params(rows))
    seconds = time.perf_counter() - t
    n = sum(pq.ParquetFile(os.path.join(out, config, f)).metadata.num_rows
            for f in os.listdir(os.path.join(out, config)) if f.startswith("train-"))
    shutil.rmtree(out, ignore_errors=True)
    return seconds, n


def _ray_input(domain: str, rows: int | None):
    from hf_synthsample.engines import ray as hf_ray

    ds = hf_ray.generate(domain, GENERATORS[domain][0], "train", **_params(rows))
    if domain == "karel":
        ds = hf_ray.map_columns(ds, _karel_program, input_columns=["program_tokens"])
    return ds.materialize()


def _ray_structure(ds, domain: str) -> tuple[float, int]:
    from hf_synthsample.engines import ray as hf_ray

    _, _, _, column, language = GENERATORS[domain]
    t = time.perf_counter()
    out = hf_ray.structure_columns(ds, column, language).materialize()
    seconds = time.perf_counter() - t
    n = out.count()
    del out
    return seconds, n


# ---------------------------------------------------------------------------------- the side-by-side phases
def side_by_side(args, helper: DatasetsSide, phase: str, work: str) -> dict:
    results = {}
    for domain in args.domains:
        config, gen_rows, struct_rows, column, language = GENERATORS[domain]
        rows = _rows(gen_rows if phase == "generation" else struct_rows, args.scale)
        ray_input = _ray_input(domain, rows) if phase == "structure" else None
        pairs = []
        for r in range(args.repeats):
            with Measure() as ma:
                a, n_a, cpu_a = helper.run(phase, domain, rows, args.cpus, work)
            print(f"  [{phase}] {domain:10} datasets num_proc={args.cpus}: {n_a:>9,} rows {a:7.2f} s, "
                  f"{cpu_a:6.2f} CPU s (peak tree {ma.peak_rss_mb:,.0f} MB, {load()})", flush=True)
            with Measure() as mb, TreeCPU() as cpu_b:
                b, n_b = (_ray_generation(domain, rows, work) if phase == "generation"
                          else _ray_structure(ray_input, domain))
            print(f"  [{phase}] {domain:10} ray num_cpus={args.cpus}:     {n_b:>9,} rows {b:7.2f} s, "
                  f"{cpu_b.seconds:6.2f} CPU s (peak tree {mb.peak_rss_mb:,.0f} MB, {load()}) ratio {a / b:.2f}",
                  flush=True)
            assert n_a == n_b, (domain, n_a, n_b)
            pairs.append((a, b, n_a, ma.peak_rss_mb, mb.peak_rss_mb, cpu_a, cpu_b.seconds))
        del ray_input
        results[domain] = pairs
    return results


def print_table(phase: str, results: dict) -> None:
    what = "to_hub_folder vs load_dataset" if phase == "generation" else "structure_columns vs Dataset.map"
    print(f"\n{phase} ({what}, num_proc / num_cpus 2): rows; median wall seconds; ratio = datasets s / Ray s "
          f"(> 1: Ray faster) per pair and median; CPU seconds (datasets: the helper and its workers; Ray: the "
          f"whole tree, Ray's own processes included) and their ratio; peak tree RSS (both sides count Ray's)")
    print(f"  {'generator':11} {'rows':>9} {'datasets s':>10} {'ray s':>7} {'ratio (each pair)':>18} {'median':>6} "
          f"{'CPU s d / ray':>14} {'CPU ratio':>9} {'peak MB d / ray':>16}")
    for domain, pairs in results.items():
        ratios = [p[0] / p[1] for p in pairs]
        med = statistics.median
        print(f"  {domain:11} {pairs[0][2]:>9,} {med(p[0] for p in pairs):>10.2f} {med(p[1] for p in pairs):>7.2f} "
              f"{' '.join(f'{x:.2f}' for x in ratios):>18} {med(ratios):>6.2f} "
              f"{med(p[5] for p in pairs):>6.1f} / {med(p[6] for p in pairs):>5.1f} "
              f"{med(p[5] / p[6] for p in pairs):>9.2f} "
              f"{max(p[3] for p in pairs):>7,.0f} / {max(p[4] for p in pairs):>6,.0f}")


def compare(args, phases: list[str]) -> None:
    work = tempfile.mkdtemp(prefix="bench-engines-")
    helper = DatasetsSide()  # forked before Ray starts
    try:
        helper.run("generation", "calculator", 20_000, args.cpus, work)  # the helper imports the library
        with Measure() as m:
            init = start_ray(args.cpus)
            from hf_synthsample.engines import ray as hf_ray

            import ray

            ray.get(hf_ray.warm_workers())  # one warm worker per CPU, as start_ray(warm=True) does
            hf_ray.to_hub_folder("calculator", os.path.join(work, "warmup"), ["dcfg"], num_examples=40_000)
        print(f"[ray] init {init:.1f} s, warm-up (workers import the library) {m.seconds - init:.1f} s, "
              f"peak tree RSS {m.peak_rss_mb:,.0f} MB ({load()})", flush=True)
        results = {phase: side_by_side(args, helper, phase, work) for phase in phases}
        for phase, res in results.items():
            print_table(phase, res)
        print(f"\n({load()})")
    finally:
        helper.close()
        shutil.rmtree(work, ignore_errors=True)


class TreeCPU:
    """CPU seconds (user + system) spent by the process tree during a phase: live processes'
    deltas plus reaped children (``RUSAGE_CHILDREN``)."""

    @staticmethod
    def _snapshot() -> dict:
        import psutil

        me = psutil.Process()
        out = {}
        for p in [me, *me.children(recursive=True)]:
            try:
                t = p.cpu_times()
                out[(p.pid, p.create_time())] = t.user + t.system
            except psutil.Error:
                pass
        return out

    @staticmethod
    def _reaped() -> float:
        import resource

        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def __enter__(self) -> "TreeCPU":
        self._start, self._reaped0 = self._snapshot(), self._reaped()
        return self

    def __exit__(self, *exc) -> None:
        end = self._snapshot()
        self.seconds = sum(v - self._start.get(k, 0.0) for k, v in end.items()) + self._reaped() - self._reaped0


def make_pool(args) -> None:
    from hf_synthsample.engines import ray as hf_ray

    if os.path.exists(args.pool_dir):
        print(f"[pool] {args.pool_dir} exists: reused")
        return
    import ray

    if not ray.is_initialized():
        start_ray(args.cpus)
    with Measure() as m:
        hf_ray.to_hub_folder("schema2qa", args.pool_dir, ["all"], num_examples=args.pool_rows, seed=0,
                             rows_per_file=1_000_000)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.pool_dir) for f in fs)
    print(f"[pool] Schema2QA 'all', {args.pool_rows:,} rows written with Ray ({args.cpus} CPUs) in {m.seconds:.0f} s "
          f"= {args.pool_rows / m.seconds:,.0f} rows/s, {size / 2**30:.2f} GiB Parquet, peak tree RSS "
          f"{m.peak_rss_mb:,.0f} MB ({load()})", flush=True)


def uat(args) -> None:
    import ray

    from hf_synthsample.engines import sampling as S

    if not ray.is_initialized():
        start_ray(args.cpus)
    with Measure() as m, TreeCPU() as cpu:
        pool = S.read_pool(args.pool_dir, columns=["template"])
        sel = S.uat_sample(pool, args.k, alpha=-1.0, seed=0, index_column=S.INDEX)
    print(f"[uat] {args.k:,} of {sel.num_rows:,} rows ({len(sel.counts):,} templates, {sel.passes} passes) in "
          f"{m.seconds:.1f} s, {cpu.seconds:.1f} CPU s = {sel.num_rows * sel.passes / cpu.seconds:,.0f} rows "
          f"per CPU s per pass, peak tree RSS {m.peak_rss_mb:,.0f} MB ({load()})", flush=True)
    assert len(sel.indices) == args.k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phases", nargs="+", choices=["generation", "structure", "pool", "uat"])
    parser.add_argument("--domains", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    parser.add_argument("--scale", type=float, default=1.0, help="rows of every generator times this")
    parser.add_argument("--repeats", type=int, default=2, help="datasets / Ray pairs per generator")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--pool-dir", default=os.path.join(tempfile.gettempdir(), "hf-synthsample-s2q-pool"))
    parser.add_argument("--pool-rows", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=120_000)
    args = parser.parse_args()
    print(f"bench_engines: {args.phases}, {load()}", flush=True)
    sides = [p for p in args.phases if p in ("generation", "structure")]
    if sides:
        compare(args, sides)
    for phase in args.phases:
        if phase in ("pool", "uat"):
            {"pool": make_pool, "uat": uat}[phase](args)


if __name__ == "__main__":
    main()
