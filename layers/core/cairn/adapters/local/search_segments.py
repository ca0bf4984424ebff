"""In-memory search structures of one team for the local index: immutable segments of rows.

A segment holds, row-aligned, the filter fields (as small integer codes, so a filter mask is a few
vector compares), the vectors as one contiguous float32 matrix, and the analysed terms as postings
(term -> row positions and BM25 frequency). Both legs are then whole-array numpy work over the rows the
filter admits, with no per-match Python or SQL: BM25 costs a few nanoseconds per posting where FTS5's
`bm25()` cost most of a microsecond per matching row, and k-NN is one pass over the matrix.

The BM25 formula is FTS5's own (`bm25(search_fts, 1.0, 2.0)`: k1 1.2, b 0.75, a title/tag hit counts
twice, document length over both columns, idf floored at 1e-6), so rankings do not move; statistics are
the team's own rows.
"""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from cairn.adapters.local import search_ivf
from cairn.adapters.local.search_ivf import Groups
from cairn.domain.models import MemoryFilter, Scope

K1, B = 1.2, 0.75
HEAD_WEIGHT = 2.0


@dataclass(frozen=True, slots=True)
class Column:
    """A string column as codes into `values` (code -1: None)."""

    codes: np.ndarray
    values: dict[str | None, int]

    @classmethod
    def of(cls, items: list[str | None]) -> Column:
        values: dict[str | None, int] = {}
        codes = np.fromiter(
            (values.setdefault(v, len(values)) for v in items), dtype=np.int32, count=len(items)
        )
        return cls(codes, values)

    def equals(self, value: str | None) -> np.ndarray:
        code = self.values.get(value)
        return np.zeros(len(self.codes), dtype=bool) if code is None else self.codes == code

    def among(self, values: Iterable[str]) -> np.ndarray:
        codes = [self.values[v] for v in values if v in self.values]
        return np.isin(self.codes, codes) if codes else np.zeros(len(self.codes), dtype=bool)


@dataclass(frozen=True, slots=True)
class Postings:
    """Terms -> (start, end) into `rows` (positions in the segment) and `freq` (body + 2 x head hits)."""

    spans: dict[str, tuple[int, int]]
    rows: np.ndarray  # int32
    freq: np.ndarray  # float32 (small whole numbers: exact)
    length: np.ndarray  # float64, tokens of body and head per row


class _PostingsBuilder:
    """Collects (term, row, frequency) in compact arrays, one row at a time, then sorts them by term."""

    def __init__(self, n: int) -> None:
        self.vocab: dict[str, int] = {}
        self.terms, self.rows, self.freqs = array("i"), array("i"), array("f")
        self.length = np.zeros(n, dtype=np.float64)
        self.moved: np.ndarray | None = None  # the rows' positions after `move`

    def move(self, order: np.ndarray) -> None:
        """Lay the rows out anew: position j now holds the row that was at `order[j]`."""
        new_place = np.empty(len(order), dtype=np.int32)
        new_place[order] = np.arange(len(order), dtype=np.int32)
        rows = np.frombuffer(self.rows, dtype=np.int32) if self.rows else np.zeros(0, np.int32)
        self.moved = new_place[rows]
        self.length = self.length[order]

    def add(self, row: int, body: str, head: str) -> None:
        body_terms, head_terms = body.split(), head.split()
        self.length[row] = len(body_terms) + len(head_terms)
        counts: Counter[str] = Counter(body_terms)
        for term, hits in Counter(head_terms).items():
            counts[term] += HEAD_WEIGHT * hits
        vocab = self.vocab
        self.terms.extend(vocab.setdefault(t, len(vocab)) for t in counts)
        self.rows.extend([row] * len(counts))
        self.freqs.extend(counts.values())

    def build(self) -> Postings:
        terms = np.frombuffer(self.terms, dtype=np.int32) if self.terms else np.zeros(0, np.int32)
        rows = np.frombuffer(self.rows, dtype=np.int32) if self.rows else np.zeros(0, np.int32)
        if self.moved is not None:
            rows = self.moved
        # by term, and by row position within a term: a filter's slices of rows are then slices of
        # each term's postings too
        order = np.lexsort((rows, terms))
        bounds = np.concatenate(([0], np.cumsum(np.bincount(terms, minlength=len(self.vocab)))))
        spans = {t: (int(bounds[i]), int(bounds[i + 1])) for t, i in self.vocab.items()}
        rows = rows[order]
        freq = np.frombuffer(self.freqs, dtype=np.float32)[order] if self.freqs else np.zeros(0, np.float32)
        return Postings(spans, rows, freq, self.length)


@dataclass(frozen=True, slots=True)
class Segment:
    rowids: np.ndarray  # int64, the search_docs rowid of each row
    ids: np.ndarray  # memory ids (object)
    kind: Column
    scope: Column
    project: Column
    owner: Column
    session_id: Column
    is_current: np.ndarray  # bool
    tags: tuple[frozenset[str], ...]
    dim: np.ndarray  # int32 per row; 0: no vector
    matrix: np.ndarray  # (n, d) float32, rows L2-normalised; zero rows where dim differs or is absent
    postings: Postings
    groups: Groups | None = None  # with the view's clusters: runs of rows by (project, cluster)

    def __len__(self) -> int:
        return len(self.rowids)

    def mask(self, flt: MemoryFilter) -> np.ndarray:
        """`MemoryFilter.admits` over the rows; mirrors it rule by rule."""
        mask = np.ones(len(self), dtype=bool)
        if not flt.include_superseded:
            mask &= self.is_current
        if flt.kinds:
            mask &= self.kind.among(k.value for k in flt.kinds)
        if flt.scopes:
            mask &= self.scope.among(s.value for s in flt.scopes)
        mask &= ~self.scope.equals(Scope.PERSONAL.value) | self.owner.equals(flt.member)
        if flt.project is not None:
            in_project = self.project.equals(flt.project)
            if flt.include_team_scope:
                in_project |= self.scope.equals(Scope.TEAM.value)
            mask &= in_project
        if flt.projects is not None:
            mask &= self.project.equals(None) | self.project.among(flt.projects)
        if flt.tags:
            mask &= np.fromiter((bool(flt.tags & t) for t in self.tags), dtype=bool, count=len(self.tags))
        if flt.session_id:
            mask &= self.session_id.equals(flt.session_id)
        return mask


def build_segment(
    rows: Iterable[tuple], projects: list[str | None], centroids: np.ndarray | None = None
) -> Segment:
    """A segment of the rows of (rowid, memory_id, kind, scope, project, owner, tags, session_id,
    is_current, body, head, dim, vector blob), ascending by rowid, consumed one at a time so that no
    row's text or vector is held longer than it takes to add it. `projects` are the rows' projects in
    the same order: rows are laid out grouped by project, so that a project's vectors are one slice of
    the matrix and a project-filtered k-NN reads only that slice. With `centroids` (a large team's
    clusters, `search_ivf`), rows are grouped by cluster within each project too."""
    n = len(projects)
    codes = Column.of(projects).codes
    place = np.empty(n, dtype=np.int64)
    place[np.lexsort((np.arange(n), codes))] = np.arange(n)  # row i of the input goes to place[i]
    rowids = np.zeros(n, dtype=np.int64)
    dims = np.zeros(n, dtype=np.int32)
    is_current = np.zeros(n, dtype=bool)
    ids: list[str] = [""] * n
    columns: list[list[str | None]] = [[None] * n for _ in range(5)]  # kind, scope, project, owner, session
    tags: list[frozenset[str]] = [_NO_TAGS] * n
    matrix = np.zeros((n, 0), dtype=np.float32)
    postings = _PostingsBuilder(n)
    for count, r in enumerate(rows):
        if count >= n or r[4] != projects[count]:
            raise RuntimeError("the rows changed while the segment was read")
        i = int(place[count])
        rowids[i], is_current[i], ids[i] = r[0], bool(r[8]), r[1]
        for column, value in zip(columns, (r[2], r[3], r[4], r[5], r[7]), strict=True):
            column[i] = value
        if r[6] != "[]":
            tags[i] = frozenset(json.loads(r[6]))
        postings.add(i, r[9] or "", r[10] or "")
        if r[11]:
            if not matrix.shape[1]:  # the first vector fixes the segment's width
                matrix = np.zeros((n, r[11]), dtype=np.float32)
            if r[11] == matrix.shape[1]:
                matrix[i] = np.frombuffer(r[12], dtype=np.float32)
                dims[i] = r[11]
    groups = None
    if centroids is not None and n and matrix.shape[1] == centroids.shape[1]:
        clusters = search_ivf.assign(matrix, centroids)
        clusters[dims == 0] = -1
        placed = np.empty(n, dtype=np.int32)
        placed[place] = codes  # each position's project code: ascending
        order = np.lexsort((np.arange(n), clusters, placed))
        rowids, dims, is_current, matrix = rowids[order], dims[order], is_current[order], matrix[order]
        ids = [ids[j] for j in order]
        columns = [[column[j] for j in order] for column in columns]
        tags = [tags[j] for j in order]
        postings.move(order)
        groups = Groups(placed[order], clusters[order])
    return Segment(
        rowids=rowids,
        ids=np.array(ids, dtype=object),
        kind=Column.of(columns[0]),
        scope=Column.of(columns[1]),
        project=Column.of(columns[2]),
        owner=Column.of(columns[3]),
        session_id=Column.of(columns[4]),
        is_current=is_current,
        tags=tuple(tags),
        dim=dims,
        matrix=matrix,
        postings=postings.build(),
        groups=groups,
    )


_NO_TAGS: frozenset[str] = frozenset()


@dataclass(slots=True)
class TeamView:
    """A team's segments with which of their rows are still live; replaced, never changed, on refresh
    (only `masks`, a cache of this view's filter masks, fills in)."""

    generation: int
    segments: tuple[Segment, ...]
    alive: tuple[np.ndarray, ...]
    base: int = 1  # the first `base` segments were built whole; the rest were caught up since
    centroids: np.ndarray | None = None  # a large team's vector clusters (`search_ivf`), unit rows
    version: str | None = None  # the model of the vectors it holds (the served one when it was read)
    masks: dict[MemoryFilter, tuple[np.ndarray, ...]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(int(a.sum()) for a in self.alive)

    def filter_masks(self, flt: MemoryFilter, limit: int = 64) -> tuple[np.ndarray, ...]:
        cached = self.masks.get(flt)
        if cached is None:
            if len(self.masks) >= limit:
                self.masks.clear()
            cached = self.masks[flt] = tuple(
                s.mask(flt) & a for s, a in zip(self.segments, self.alive, strict=True)
            )
        return cached

    # -- the two legs -----------------------------------------------------------------------------

    def _totals(self) -> tuple[int, float, tuple[bool, ...]]:
        """Live rows, their tokens, and which segments have no dead row (cached: a view never changes)."""
        cached = self.masks.get("totals")  # type: ignore[call-overload]
        if cached is None:
            whole = tuple(bool(a.all()) for a in self.alive)
            tokens = sum(
                float(s.postings.length.sum() if w else s.postings.length[a].sum())
                for s, a, w in zip(self.segments, self.alive, whole, strict=True)
            )
            cached = self.masks["totals"] = (self.rows, tokens, whole)  # type: ignore[index]
        return cached

    def bm25(self, terms: list[str], flt: MemoryFilter, k: int) -> list[tuple[str, float]]:
        """FTS5's bm25 over the live rows, best first (higher is better), ties by insertion order.
        Statistics are the team's; only the postings inside the filter's slices of rows are scored."""
        total_rows, total_tokens, whole = self._totals()
        if not total_rows or not terms:
            return []
        avgdl = total_tokens / total_rows
        hits = {t: 0 for t in terms}
        for seg, alive, all_alive in zip(self.segments, self.alive, whole, strict=True):
            for t in terms:
                span = seg.postings.spans.get(t)
                if span is None:
                    continue
                if all_alive:
                    hits[t] += span[1] - span[0]
                else:
                    hits[t] += int(np.count_nonzero(alive[seg.postings.rows[span[0] : span[1]]]))
        idf = {}
        for t, n_hit in hits.items():
            value = math.log((total_rows - n_hit + 0.5) / (n_hit + 0.5))
            idf[t] = value if value > 0 else 1e-6
        picked: list[tuple[np.ndarray, np.ndarray, int]] = []
        segments = zip(
            self.segments, self.filter_masks(flt), self._runs(flt), self._norms(avgdl), strict=True
        )
        for i, (seg, mask, runs, norms) in enumerate(segments):
            p = seg.postings
            scores = None
            for t in terms:
                span = p.spans.get(t)
                if span is None or not hits[t] or not runs:
                    continue
                for lo, hi in _within(p.rows, span, runs):
                    if scores is None:
                        scores = np.zeros(len(seg), dtype=np.float64)
                    rows = p.rows[lo:hi]
                    freq = p.freq[lo:hi].astype(np.float64)
                    # parenthesised as FTS5 computes it, so equal scores stay equal (ties keep their order)
                    scores[rows] += idf[t] * ((freq * (K1 + 1.0)) / (freq + norms[rows]))
            if scores is not None:
                positions = np.flatnonzero(scores > 0.0)
                positions = positions[mask[positions]]
                picked.append((scores[positions], positions, i))
        return self._best(picked, k, by_id=False)

    def _norms(self, avgdl: float) -> tuple[np.ndarray, ...]:
        """Per segment, each row's BM25 length norm `K1 * (1 - B + B * length / avgdl)` (per view)."""
        cached = self.masks.get("norms")  # type: ignore[call-overload]
        if cached is None:
            cached = self.masks["norms"] = tuple(  # type: ignore[index]
                K1 * (1 - B + B * s.postings.length / avgdl) for s in self.segments
            )
        return cached

    def _best(
        self, picked: list[tuple[np.ndarray, np.ndarray, int]], k: int, by_id: bool
    ) -> list[tuple[str, float]]:
        """The k best of the segments' (scores, row positions, segment) as (memory id, score), ties by
        rowid (FTS5 keeps the earliest rows) or, `by_id`, by memory id (cosines always have)."""
        picked = [p for p in picked if len(p[0])]
        if not picked or k <= 0:
            return []
        scores = np.concatenate([p[0] for p in picked])
        positions = np.concatenate([p[1] for p in picked])
        segment = np.concatenate([np.full(len(p[0]), p[2], dtype=np.int32) for p in picked])
        keep = np.arange(len(scores))
        if len(scores) > k:  # the k best, and every row tied with the k-th
            kth = -np.partition(-scores, k - 1)[k - 1]
            keep = np.flatnonzero(scores >= kth)
        found = []
        for j in keep.tolist():
            seg, row = self.segments[segment[j]], positions[j]
            found.append((-float(scores[j]), int(seg.rowids[row]), str(seg.ids[row])))
        found.sort(key=(lambda f: (f[0], f[2])) if by_id else None)
        return [(memory_id, -negated) for negated, _, memory_id in found[:k]]

    def knn(self, query: np.ndarray, flt: MemoryFilter, k: int) -> list[tuple[str, float]]:
        """Cosine k-NN over the admitted rows: all of them, or past `search_ivf.EXACT_MAX` admitted rows
        of a clustered view, those in the query's nearest clusters."""
        picked: list[tuple[np.ndarray, np.ndarray, int]] = []
        probe = None
        centroids = self.centroids
        if (
            centroids is not None
            and centroids.shape[1] == len(query)
            and self._admitted(flt) > search_ivf.EXACT_MAX
        ):
            probe = search_ivf.nearest_clusters(centroids, query, search_ivf.NPROBE)
        segments = zip(self.segments, self.filter_masks(flt), self._runs(flt), strict=True)
        for i, (seg, mask, runs) in enumerate(segments):
            if seg.matrix.shape[1] != len(query) or not runs:
                continue
            # einsum, not `@`: BLAS gemv hands this size to OpenBLAS worker threads, which then spin for
            # ~0.1 s; with a recall every few tens of ms one of them never slept, burning a whole core.
            # Only the slices of rows the filter admits are scored (a project is one or two slices).
            if probe is not None and seg.groups is not None:
                positions = seg.groups.positions(probe, runs)
                if not len(positions):
                    continue
                scores = np.einsum("ij,j->i", seg.matrix[positions], query).astype(np.float64)
            else:
                parts = [np.einsum("ij,j->i", seg.matrix[lo:hi], query) for lo, hi in runs]
                positions = np.concatenate([np.arange(lo, hi) for lo, hi in runs])
                scores = np.concatenate(parts).astype(np.float64)
            usable = mask[positions] & (seg.dim[positions] == len(query))
            picked.append((scores[usable], positions[usable], i))
        return self._best(picked, k, by_id=True)

    def _admitted(self, flt: MemoryFilter) -> int:
        key = ("admitted", flt)
        cached = self.masks.get(key)  # type: ignore[call-overload]
        if cached is None:
            cached = self.masks[key] = sum(int(np.count_nonzero(m)) for m in self.filter_masks(flt))  # type: ignore[index]
        return cached

    def _runs(self, flt: MemoryFilter) -> tuple[list[tuple[int, int]], ...]:
        """Per segment, the slices of rows to score for `flt`: its admitted rows' runs, or one slice of
        the whole segment when they are scattered (a kind or tag filter)."""
        key = ("runs", flt)
        cached = self.masks.get(key)  # type: ignore[call-overload]
        if cached is None:
            cached = self.masks[key] = tuple(_slices(m) for m in self.filter_masks(flt))  # type: ignore[index]
        return cached


def _within(rows: np.ndarray, span: tuple[int, int], runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of one term's postings (rows ascending within `span`) that fall inside `runs`."""
    if len(runs) == 1 and runs[0][0] == 0 and runs[0][1] > int(rows[span[1] - 1]):
        return [span]
    term_rows = rows[span[0] : span[1]]
    edges = np.searchsorted(term_rows, np.asarray(runs, dtype=np.int64).ravel()) + span[0]
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True) if b > a]


def _slices(mask: np.ndarray, gap: int = 512, most: int = 8) -> list[tuple[int, int]]:
    """The admitted rows as a few slices: runs closer than `gap` rows are joined (scoring a few
    rejected rows is cheaper than another call), and past `most` slices one slice covers them all."""
    if not mask.any():
        return []
    edges = np.flatnonzero(np.diff(mask.astype(np.int8))) + 1
    bounds = np.concatenate(([0], edges, [len(mask)]))
    runs: list[tuple[int, int]] = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if not mask[lo]:
            continue
        if runs and lo - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], int(hi))
        else:
            runs.append((int(lo), int(hi)))
    return runs if len(runs) <= most else [(runs[0][0], runs[-1][1])]
