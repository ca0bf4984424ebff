"""An inverted-file (IVF) layout for a large team's vectors: the k-NN leg's approximate path.

Past `MIN_ROWS` rows, a team's vectors are clustered (spherical k-means on an evenly spaced sample of
them, `NLIST` centroids) and each segment lays its rows out by (project, cluster), so that one cluster of
one project is one contiguous slice of the matrix. A query whose filter admits more than `EXACT_MAX` rows
then scores only the rows of its `NPROBE` nearest clusters that the filter admits (the filter's slices
intersected with the clusters' slices), exactly, instead of every admitted row; a smaller filter keeps
the exact scan. Filtering stays inside the search: rows outside the filter are never scored.

The clustering is derived from the stored vectors when a view is built, deterministically, and lives
only in memory beside the view: there is nothing on disk to go stale or be torn by a crash, and
`cairn reindex` rebuilds it with everything else.
"""

from __future__ import annotations

import numpy as np

MIN_ROWS = 200_000  # a team with fewer rows is always scanned exactly
EXACT_MAX = 60_000  # a filter admitting at most this many rows is scanned exactly
NLIST = 256  # clusters
NPROBE = 16  # clusters scored per query: the k-NN top 100 keeps ~84 % of the exact one at 1M
SAMPLE_PER_CLUSTER = 48  # k-means training rows per cluster
ITERATIONS = 8
_CHUNK = 8_192  # rows per matrix product when assigning


def train(sample: np.ndarray, nlist: int, iterations: int = ITERATIONS) -> np.ndarray:
    """`nlist` unit centroids of the (L2-normalised) rows of `sample` by spherical k-means, seeded with
    evenly spaced rows, so the same sample always gives the same centroids."""
    sample = _unit(np.asarray(sample, dtype=np.float32))
    nlist = max(1, min(nlist, len(sample)))
    centroids = sample[np.linspace(0, len(sample) - 1, nlist).astype(np.int64)].copy()
    for _ in range(iterations):
        labels = assign(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, sample)
        filled = np.bincount(labels, minlength=nlist) > 0
        centroids[filled] = _unit(sums[filled])  # an empty cluster keeps its centroid
    return centroids


def assign(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The nearest centroid (by cosine) of each row, as int32."""
    out = np.empty(len(matrix), dtype=np.int32)
    for lo in range(0, len(matrix), _CHUNK):
        out[lo : lo + _CHUNK] = np.argmax(matrix[lo : lo + _CHUNK] @ centroids.T, axis=1)
    return out


def nearest_clusters(centroids: np.ndarray, query: np.ndarray, nprobe: int = NPROBE) -> np.ndarray:
    """A lookup table over cluster codes + 1 (code -1: a row without a vector) marking the `nprobe`
    clusters nearest the query."""
    scores = np.einsum("ij,j->i", centroids, query)
    nprobe = min(nprobe, len(centroids))
    chosen = np.argpartition(-scores, nprobe - 1)[:nprobe]
    lut = np.zeros(len(centroids) + 1, dtype=bool)
    lut[chosen + 1] = True
    return lut


class Groups:
    """A segment's runs of equal (project, cluster): row `lo[g]` up to `hi[g]` are cluster `cluster[g]`."""

    __slots__ = ("cluster", "hi", "lo")

    def __init__(self, project_codes: np.ndarray, clusters: np.ndarray) -> None:
        key = project_codes.astype(np.int64) * (int(clusters.max(initial=0)) + 2) + clusters + 1
        edges = np.flatnonzero(np.diff(key)) + 1
        self.lo = np.concatenate(([0], edges)).astype(np.int64)
        self.hi = np.concatenate((edges, [len(key)])).astype(np.int64)
        self.cluster = clusters[self.lo] if len(key) else np.zeros(0, np.int32)

    def positions(self, lut: np.ndarray, runs: list[tuple[int, int]]) -> np.ndarray:
        """The row positions inside `runs` whose cluster `lut` marks, ascending."""
        chosen = lut[self.cluster + 1]
        lo, hi = self.lo[chosen], self.hi[chosen]
        starts, ends = [], []
        for run_lo, run_hi in runs:
            s, e = np.maximum(lo, run_lo), np.minimum(hi, run_hi)
            keep = e > s
            starts.append(s[keep])
            ends.append(e[keep])
        s, e = np.concatenate(starts), np.concatenate(ends)
        lengths = e - s
        total = int(lengths.sum())
        if not total:
            return np.zeros(0, dtype=np.int64)
        offsets = np.cumsum(lengths) - lengths
        return np.arange(total, dtype=np.int64) + np.repeat(s - offsets, lengths)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)
