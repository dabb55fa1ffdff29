"""Wall time and peak resident memory of this process and all its children (sampled)."""

from __future__ import annotations

import threading
import time

import psutil


class Measure:
    """Context manager: ``.seconds`` and ``.peak_rss_mb`` (sum over the process tree, sampled every 20 ms)."""

    def __init__(self, interval: float = 0.02):
        self.interval = interval
        self.peak_rss_mb = 0.0
        self.seconds = 0.0
        self._stop = threading.Event()

    def _tree_rss(self) -> float:
        me = psutil.Process()
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**20

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.peak_rss_mb = max(self.peak_rss_mb, self._tree_rss())
            self._stop.wait(self.interval)

    def __enter__(self) -> "Measure":
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._start = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._start
        self._stop.set()
        self._thread.join()
        self.peak_rss_mb = max(self.peak_rss_mb, self._tree_rss())
