"""The sampler interface: a configured object that picks row indices of a ``Dataset``.

Samplers follow scikit-learn conventions: parameters are validated in ``__init__`` and stored
under their own names (``get_params`` reads them back for provenance records); results of the
last call are stored with a trailing underscore (e.g. ``report_``). One method does the work,
:meth:`BaseSampler.indices`; the rest adapt it to ``Dataset.select`` / ``Dataset.filter``.

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.sampling import HomogenizeSampler
    >>> ds = Dataset.from_dict({"v": [0, 0, 0, 0, 1, 1]})
    >>> sampler = HomogenizeSampler("v", seed=0)
    >>> sorted(ds.select(sampler.indices(ds, 4))["v"])  # as uniform as the pool allows
    [0, 0, 1, 1]
    >>> len(ds.filter(sampler.filter_function(ds, 4), with_indices=True, batched=True))
    4
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..validation import check_int, check_not_empty

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["BaseSampler"]


class BaseSampler:
    """Base class: subclasses implement :meth:`_indices` and validate parameters in ``__init__``."""

    def indices(self, dataset: "Dataset", k: int | None = None) -> np.ndarray:
        """Selected row indices (sorted ascending, no repeats) of a subset of ``k`` rows.

        ``k=None`` means the sampler's own default size (see the subclass).
        """
        check_not_empty(dataset)
        if k is not None:
            k = check_int("k", k, min=0, max=len(dataset))
        out = np.asarray(self._indices(dataset, k), dtype=np.int64)
        return out

    def _indices(self, dataset: "Dataset", k: int | None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def sample(self, dataset: "Dataset", k: int | None = None) -> "Dataset":
        """The subset itself: ``dataset.select(self.indices(dataset, k))``."""
        return dataset.select(self.indices(dataset, k))

    def mask(self, dataset: "Dataset", k: int | None = None) -> np.ndarray:
        """Boolean mask over the rows of ``dataset`` marking the selected ones."""
        mask = np.zeros(len(dataset), dtype=bool)
        mask[self.indices(dataset, k)] = True
        return mask

    def filter_function(self, dataset: "Dataset", k: int | None = None) -> Callable:
        """A function for ``dataset.filter(fn, with_indices=True, batched=True)`` keeping the selection.

        The selection is computed once, here; the returned function only looks it up, so it
        works with any ``num_proc``.
        """
        mask = self.mask(dataset, k)

        def keep(batch: Any, indices: list[int]) -> list[bool]:
            return mask[np.asarray(indices, dtype=np.int64)].tolist()

        return keep

    # ------------------------------------------------------------------ scikit-learn style
    def get_params(self) -> dict:
        """Constructor parameters and their current values (for provenance and ``repr``)."""
        sig = inspect.signature(type(self).__init__)
        return {
            name: getattr(self, name)
            for name, p in sig.parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
