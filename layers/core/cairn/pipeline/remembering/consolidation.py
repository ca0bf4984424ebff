"""Consolidation, the one place candidates become memories: dedup, contradictions, index, graph, promote.

Order matters. An exact duplicate (same kind and normalised content in the project) is merged first;
then a candidate that reverses a current decision/preference supersedes it (checked before the
near-duplicate test, because "use X" and "don't use X" look alike to embeddings); then a near
duplicate (embedding cosine and word overlap) is merged; anything else becomes a new memory.

Writes go through MemoryService, which indexes (embeds) them. Merges record the session in
`details.sessions`, so a memory gains confidence once per session that evidences it and a rerun
of the same session changes nothing.

A near duplicate is looked for the same way in both modes. The candidates are the index's vector
neighbours and its lexical (BM25) neighbours within the project and kind, plus the memories this run
has written already (in AWS the stream indexes them after the run, so the index cannot know them yet);
the decision is the exact cosine between stored vectors (the index's, by id; embedded when it has none)
and the word overlap. A k-NN leg is approximate (HNSW) or missing (an emulator), and its score is not a
decision: a near duplicate shares most of its words, so the lexical leg finds what the vector leg misses.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from cairn.domain.models import Memory, MemoryFilter, MemoryKind, Provenance, Scope, content_hash
from cairn.domain.ports import StoredVectors
from cairn.domain.vocabulary import Tag
from cairn.pipeline.deps import PipelineDeps, pipeline_principal
from cairn.pipeline.models import Candidate, EventsDoc, taught_at
from cairn.pipeline.reading.steps import Hearing, said_in_span, written_by
from cairn.pipeline.remembering.contradictions import contradicts
from cairn.pipeline.remembering.subjects import same_procedure
from cairn.redaction import redact, redact_value
from cairn.services.memories import MemoryPatch, NewMemory

NEAR_COSINE = 0.90
NEAR_OVERLAP = 0.6
CONFIDENCE_STEP = 0.1
CONFIDENCE_CAP = 0.95
STANCE_KINDS = frozenset({MemoryKind.DECISION, MemoryKind.PREFERENCE, MemoryKind.PATTERN})
NEAR_KINDS = frozenset({MemoryKind.DECISION, MemoryKind.PREFERENCE, MemoryKind.PATTERN, MemoryKind.FACT})
PROMOTE_KINDS = frozenset({MemoryKind.PATTERN, MemoryKind.PREFERENCE})
PROMOTE_PROJECTS = 3
PROMOTE_SCAN = 2_000
PROMOTE_NEIGHBOURS = 50
NEAR_NEIGHBOURS = 10  # per leg of the index search for one candidate's near duplicates
_WORD = re.compile(r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?")  # "file.py" is a word; a full stop is not


@dataclass
class Outcome:
    created: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    superseded: list[list[str]] = field(default_factory=list)  # [old, new]
    relations: int = 0
    promoted: list[str] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)  # candidate ref -> memory id


def redacted(c: Candidate) -> Candidate:
    """Defence in depth: clients redact before upload, but a memory must never carry a secret regardless."""
    content, title = redact(c.content), redact(c.title or "")
    details = redact_value(c.details, Counter())
    if not content.counts and not title.counts and details == c.details:
        return c
    return c.model_copy(update={"content": content.text, "title": title.text or None, "details": details})


def _identity(c: Candidate) -> tuple[str, str]:
    return c.kind.value, content_hash(c.kind, c.content)


def _versions_together(batch: list[Candidate]) -> list[Candidate]:
    """One fact of the versions a session installed, not one per install command (a later install
    of the same package wins): three "Installed versions" facts of one session said one thing."""
    found = sorted(
        (c for c in batch if c.kind is MemoryKind.FACT and Tag.VERSIONS in c.tags),
        key=lambda c: c.line_start or 0,
    )
    if len(found) < 2:
        return batch
    versions: dict[str, str] = {}
    for c in found:
        versions.update({str(n): str(v) for n, v in (c.details.get("versions") or {}).items()})
    listed = ", ".join(f"{n}@{v}" for n, v in versions.items())
    combined = found[0].model_copy(
        update={
            "content": f"Installed versions: {listed}",
            "details": {"source": "tool", "versions": versions},
            "line_end": max(c.line_end or c.line_start or 0 for c in found) or None,
        }
    )
    return [c for c in batch if not any(c is f for f in found)] + [combined]


def prepared(batch: list[Candidate]) -> list[Candidate]:
    """The chunks' candidates made ready to consolidate: redacted, one fact of the installed versions,
    one candidate per (kind, content), one procedure per command however the session ran it."""
    return _merge_batch(_versions_together([redacted(c) for c in batch]))


def _key(c: Candidate, merged: dict[tuple[str, str], Candidate]) -> tuple[str, str]:
    """The candidate `c` merges into: one of the same kind and content, or a procedure of the same
    command (`subjects.same_procedure`: `cd go && go build ./cmd/x 2>&1` is `go build -v ./cmd/x`), the
    first the session ran standing for the others."""
    key = _identity(c)
    if key in merged or c.kind is not MemoryKind.PROCEDURE or not c.details.get("command"):
        return key
    shape = (c.content, c.details, set(c.tags))
    for other_key, other in merged.items():
        if other.kind is MemoryKind.PROCEDURE and same_procedure(
            (other.content, other.details, set(other.tags)), shape
        ):
            return other_key
    return key


def _merge_batch(batch: list[Candidate]) -> list[Candidate]:
    """One candidate per (kind, content) of this session, and per procedure's command; run counts of
    procedures add up."""
    merged: dict[tuple[str, str], Candidate] = {}
    for c in batch:
        key = _key(c, merged)
        first = merged.get(key)
        if first is None:
            merged[key] = c
            continue
        details = dict(first.details)
        for count in ("success_count", "failure_count"):
            if count in c.details or count in details:
                details[count] = int(details.get(count, 0)) + int(c.details.get(count, 0))
        merged[key] = first.model_copy(
            update={
                "details": details,
                "links": first.links + [lk for lk in c.links if lk not in first.links],
                "ref": first.ref or c.ref,
            }
        )
    return list(merged.values())


class Consolidation:
    """One batch of a session's candidates into memories (see the module's docstring for the order)."""

    def __init__(self, deps: PipelineDeps, session, events: EventsDoc) -> None:
        self.deps = deps
        self.session = session
        self.caller = pipeline_principal(session)
        self.project = session.project
        self.events = events
        self.said_at = taught_at(events.events, session)  # when its session said what it teaches
        self.out = Outcome()
        self._current: dict[MemoryKind, list[Memory]] = {}
        self._ids: dict[int, str] = {}  # candidate (by identity) -> the memory it became or merged into
        # what this run wrote or merged into, as last written: near-duplicate candidates the index may
        # not hold yet (AWS indexes from the table's stream), and each memory's vector once known
        self._written: dict[str, Memory] = {}
        self._vectors: dict[str, list[float]] = {}
        self._hearing: Hearing | None = None  # what the agent heard before each message, once read

    # --- the per-candidate decision ----------------------------------------------------------
    def apply(self, batch: list[Candidate]) -> Outcome:
        vectors = self._embed(batch if self.deps.warm_vectors else [c for c in batch if c.kind in NEAR_KINDS])
        touched: list[Memory] = []
        for c in batch:
            vector = vectors.get(id(c)) if c.kind in NEAR_KINDS else None
            memory = self._one(c, vector)
            self._wrote(memory, c, vector)
            self._ids[id(c)] = memory.id
            if c.ref:
                self.out.refs[c.ref] = memory.id
            touched.append(memory)
        self._link(batch)
        self._promote([m for m in touched if m.kind in PROMOTE_KINDS])
        return self.out

    def _one(self, c: Candidate, vector: list[float] | None) -> Memory:
        new = self._new_memory(c)
        existing = self.deps.memory_repo.find_by_hash(
            self.session.team_id, self.project, content_hash(c.kind, new.content)
        )
        if existing is not None and existing.scope is Scope.PROJECT:
            return self._merge(existing, c)
        if (old := self._outdated_by(c)) is None and c.kind in STANCE_KINDS:
            old = self._contradicted(c)
        if old is not None:
            closed, replacement = self.deps.memories.supersede(self.caller, old.id, new)
            self.out.superseded.append([closed.id, replacement.id])
            self._forget_current(closed)
            self._written.pop(closed.id, None)
            self._close_others(c, replacement)
            self._current.setdefault(c.kind, []).append(replacement)
            return replacement
        if vector is not None and (near := self._near_duplicate(c, vector)) is not None:
            return self._merge(near, c)
        memory = self.deps.memories.remember(self.caller, new)
        self.out.created.append(memory.id)
        self._current.setdefault(c.kind, []).append(memory)
        return memory

    def _new_memory(self, c: Candidate) -> NewMemory:
        details: dict[str, Any] = dict(c.details)
        details["sessions"] = [self.session.id]
        if branch := self.events.switched_branch(c.line_start):
            details["branch"] = branch
        if "success_count" in details:
            details["runs"] = {
                self.session.id: [int(details.get("success_count", 0)), int(details.get("failure_count", 0))]
            }
        return NewMemory(
            kind=c.kind,
            content=c.content,
            project=self.project,
            title=c.title,
            tags=tuple(c.tags),
            confidence=c.confidence,
            details=details,
            provenance=self._provenance(c),
            said_at=self.said_at,
        )

    def _provenance(self, c: Candidate) -> Provenance:
        key, start, end = None, c.line_start, c.line_end
        if c.line_start is not None:
            for span in self.events.parts:
                if span.first_line <= c.line_start < span.first_line + span.lines:
                    key, start = span.key, c.line_start - span.first_line + 1
                    if c.line_end is not None:
                        end = c.line_end - span.first_line + 1
                    break
        # who said it: a rule extractor says so (`details.source`), else the cited lines tell
        if self._hearing is None:
            own = written_by(self.events.subagent_calls, self.events.cwd)
            self._hearing = Hearing(self.events.events, self.events.cwd, own)
        said, sources = said_in_span(
            self.events.events, c.line_start, c.line_end, self.events.cwd, c.content, self._hearing
        )
        said = {"user": "user", "tool": "tool"}.get(str(c.details.get("source")), said)
        return Provenance(
            session_id=self.session.id,
            transcript_key=key,
            line_start=start,
            line_end=end,
            agent=self.session.agent,
            said_by=said,
            sources=() if said == "user" else sources,
        )

    def _merge(self, memory: Memory, c: Candidate) -> Memory:
        details = dict(memory.details)
        sessions = list(details.get("sessions") or [])
        changed = False
        confidence = memory.confidence
        if self.session.id not in sessions:
            sessions.append(self.session.id)
            details["sessions"] = sessions
            confidence = min(CONFIDENCE_CAP, max(memory.confidence, c.confidence) + CONFIDENCE_STEP)
            changed = True
        if "success_count" in c.details:
            runs = dict(details.get("runs") or {})
            mine = [int(c.details.get("success_count", 0)), int(c.details.get("failure_count", 0))]
            if runs.get(self.session.id) != mine:
                runs[self.session.id] = mine
                details["runs"] = runs
                details["success_count"] = sum(r[0] for r in runs.values())
                details["failure_count"] = sum(r[1] for r in runs.values())
                changed = True
        if memory.id not in self.out.merged and memory.id not in self.out.created:
            # what this very session created (a run cut off by a crash, then resumed) stays its creation
            mine = memory.provenance.session_id == self.session.id
            (self.out.created if mine else self.out.merged).append(memory.id)
        if not changed:
            return memory
        return self.deps.memories.update(
            self.caller, memory.id, MemoryPatch(details=details, confidence=confidence)
        )

    # --- contradictions ----------------------------------------------------------------------
    def _current_of(self, kind: MemoryKind) -> list[Memory]:
        if kind not in self._current:
            flt = MemoryFilter(
                project=self.project,
                include_team_scope=False,
                kinds=frozenset({kind}),
                scopes=frozenset({Scope.PROJECT}),
            )
            self._current[kind] = list(self.deps.memories.list(self.caller, flt, limit=500).items)
        return self._current[kind]

    def _forget_current(self, memory: Memory) -> None:
        for kind_list in self._current.values():
            kind_list[:] = [m for m in kind_list if m.id != memory.id]

    def _outdated_by(self, c: Candidate) -> Memory | None:
        """The memory that described the same thing (`details["about"]`, e.g. one manifest's tasks)
        as it was: a newer description replaces it instead of merging into its near-duplicate."""
        about = c.details.get("about")
        if not about:
            return None
        return next(
            (m for m in self._current_of(c.kind) if m.is_current and m.details.get("about") == about), None
        )

    def _close_others(self, c: Candidate, current: Memory) -> None:
        """Every other current description of what `current` describes is outdated by it, not only
        the newest: a store can hold several side by side (written before this rule, or by hand), and
        each would still read as the file's current tasks. The newest says it, once."""
        self._forget_current(current)
        while (older := self._outdated_by(c)) is not None:
            shut = self.deps.memories.close(
                self.caller, older.id, {**older.details, "outdated_by": current.id}, current.id
            )
            self.out.superseded.append([shut.id, current.id])
            self._forget_current(older)
            self._written.pop(older.id, None)

    def _contradicted(self, c: Candidate) -> Memory | None:
        # newest first: the most recent stance is the one being reversed
        for m in self._current_of(c.kind):
            if (
                m.is_current
                and m.provenance.session_id != self.session.id
                and contradicts(c.content, m.content)
            ):
                return m
        return None

    # --- near duplicates ---------------------------------------------------------------------
    def _embed(self, batch: list[Candidate]) -> dict[int, list[float]]:
        if not batch or self.deps.embedder is None or self.deps.index is None:
            return {}
        # the text the index embeds for the memory each becomes: an embedder that caches (local mode)
        # then hands the indexer this very vector instead of embedding the memory a second time
        vectors = self.deps.embedder.embed([_indexed_text(c) for c in batch])
        return {id(c): v for c, v in zip(batch, vectors, strict=True)}

    def _near_duplicate(self, c: Candidate, vector: list[float]) -> Memory | None:
        flt = MemoryFilter(
            project=self.project,
            include_team_scope=False,
            kinds=frozenset({c.kind}),
            scopes=frozenset({Scope.PROJECT}),
        )
        found = self._near(c.content, vector, flt, NEAR_NEIGHBOURS)
        return found[0] if found else None

    def _near(self, text: str, vector: list[float], flt: MemoryFilter, k: int) -> list[Memory]:
        """The current memories `flt` admits that are near duplicates of `text` (whose vector is
        `vector`), best first: word overlap at least NEAR_OVERLAP and exact cosine at least
        NEAR_COSINE. Looked for among the index's k vector and k lexical neighbours and what this run
        wrote; the index's own scores only choose whom to look at."""
        found = self.deps.index.search(self.session.team_id, text, vector, flt, k, k)  # type: ignore[union-attr]
        listed = [mid for mid, _ in (*found.semantic, *found.lexical) if mid not in self._written]
        pool = dict(self.deps.memory_repo.get_many(self.session.team_id, list(dict.fromkeys(listed))))
        pool.update(self._written)
        alike = [m for m in pool.values() if flt.admits(m) and overlap(m.content, text) >= NEAR_OVERLAP]
        stored = self._stored_vectors(alike)
        scored = [(cosine(vector, stored[m.id]), m) for m in alike if m.id in stored]
        # ties (equal search texts) go to the oldest, which both modes wrote first
        scored.sort(key=lambda s: (-s[0], s[1].created_at, s[1].id))
        return [m for score, m in scored if score >= NEAR_COSINE]

    def _stored_vectors(self, memories: list[Memory]) -> dict[str, list[float]]:
        """Each memory's vector of its current search text: known to this run, stored in the index
        (by id), or else embedded now (a memory the index has not caught up with)."""
        if self.deps.embedder is None:
            return {}
        model = self.deps.embedder.version
        wanted = [m for m in memories if m.id not in self._vectors]
        if wanted and isinstance(self.deps.index, StoredVectors):
            self._vectors.update(self.deps.index.stored_vectors(wanted, model))
        missing = [m for m in wanted if m.id not in self._vectors]
        if missing:
            embedded = self.deps.embedder.embed([m.search_text() for m in missing])
            self._vectors.update({m.id: v for m, v in zip(missing, embedded, strict=True)})
        return {m.id: self._vectors[m.id] for m in memories if m.id in self._vectors}

    def _wrote(self, memory: Memory, c: Candidate, vector: list[float] | None) -> None:
        """Remember what this run wrote, with the candidate's vector when it embedded the very text
        the memory is indexed by (a merge keeps the stored memory's text, so not then)."""
        self._written[memory.id] = memory
        if vector is not None and memory.id not in self._vectors and memory.search_text() == _indexed_text(c):
            self._vectors[memory.id] = vector

    # --- graph -------------------------------------------------------------------------------
    def _link(self, batch: list[Candidate]) -> None:
        pairs: list[tuple[str, str, str]] = []
        for c in batch:
            source = self._ids.get(id(c))
            for link in c.links:
                target = self.out.refs.get(link.target_ref)
                if source and target:
                    pairs.append((source, link.predicate, target))
        # a procedure uses what a fact says about the same command (e.g. the URL it serves)
        by_command: dict[str, list[tuple[MemoryKind, str]]] = {}
        for c in batch:
            command = c.details.get("command")
            memory_id = self._ids.get(id(c))
            if isinstance(command, str) and memory_id:
                by_command.setdefault(command, []).append((c.kind, memory_id))
        for items in by_command.values():
            procedures = [mid for kind, mid in items if kind is MemoryKind.PROCEDURE]
            facts = [mid for kind, mid in items if kind is MemoryKind.FACT]
            pairs.extend((p, "uses", f) for p in procedures for f in facts)
        for source, predicate, target in dict.fromkeys(pairs):
            self._relate(source, predicate, target)

    def _relate(self, source: str, predicate: str, target: str) -> None:
        if source == target:
            return
        existing = self.deps.relations.for_memory(self.session.team_id, source, "out")
        if any(r.predicate == predicate and r.target_id == target for r in existing):
            return
        self.deps.memories.relate(self.caller, source, predicate, target)
        self.out.relations += 1

    # --- promotion ---------------------------------------------------------------------------
    def _promote(self, memories: list[Memory]) -> None:
        """A pattern or preference that several projects hold, in any wording close enough to count
        as the same (the near-duplicate rule), becomes one team-wide memory linked to each copy."""
        if not memories:
            return
        vectors = self._vectors_of(memories)
        by_hash = None if vectors else self._scan_by_hash()
        for memory in memories:
            vector = vectors.get(memory.id)
            if vector is not None:
                group = self._alike(memory, vector, Scope.PROJECT)
            else:
                group = (by_hash or {}).get(memory.content_hash, [memory])
            projects = sorted({m.project for m in group if m.project})
            if len(projects) < PROMOTE_PROJECTS:
                continue
            team = self._promoted_already(group) or self.deps.memory_repo.find_by_hash(
                self.session.team_id, None, memory.content_hash
            )
            if team is None and vector is not None:
                team = next(iter(self._alike(memory, vector, Scope.TEAM)), None)
            if team is None:
                team = self.deps.memories.remember(
                    self.caller,
                    NewMemory(
                        kind=memory.kind,
                        content=memory.content,
                        scope=Scope.TEAM,
                        title=memory.title,
                        tags=(*memory.tags, Tag.PROMOTED),
                        confidence=min(CONFIDENCE_CAP, max(m.confidence for m in group)),
                        details={"promoted_from": [m.id for m in group], "projects": projects},
                        provenance=replace(memory.provenance),
                        said_at=memory.valid_from,
                    ),
                )
                self.out.promoted.append(team.id)
            for m in group:  # a project that joins later is linked to the team memory too
                self._relate(m.id, "part-of", team.id)

    def _vectors_of(self, memories: list[Memory]) -> dict[str, list[float]]:
        if self.deps.embedder is None or self.deps.index is None:
            return {}
        return self._stored_vectors(memories)  # of search_text(), as the index holds: like with like

    def _promoted_already(self, group: list[Memory]) -> Memory | None:
        """The team memory an earlier promotion linked one of these copies to, if it is still current."""
        for m in group:
            for r in self.deps.relations.for_memory(self.session.team_id, m.id, "out"):
                if r.predicate != "part-of":
                    continue
                team = self.deps.memory_repo.get(self.session.team_id, r.target_id)
                if team is not None and team.is_current and team.scope is Scope.TEAM:
                    return team
        return None

    def _alike(self, memory: Memory, vector: list[float], scope: Scope) -> list[Memory]:
        """Current memories of the same kind and scope that are near duplicates of `memory` (itself
        included when it has that scope), across every project of the team."""
        flt = MemoryFilter(kinds=frozenset({memory.kind}), scopes=frozenset({scope}))
        found = [m for m in self._near(memory.content, vector, flt, PROMOTE_NEIGHBOURS) if m.id != memory.id]
        if memory.scope is scope and memory.is_current:
            found.insert(0, memory)
        return found

    def _scan_by_hash(self) -> dict[str, list[Memory]]:
        """Without an index: group by exact content, over the team's most recent project memories."""
        flt = MemoryFilter(kinds=PROMOTE_KINDS, scopes=frozenset({Scope.PROJECT}))
        seen: dict[str, list[Memory]] = {}
        cursor = None
        scanned = 0
        while scanned < PROMOTE_SCAN:
            page = self.deps.memories.list(self.caller, flt, limit=500, cursor=cursor)
            for m in page.items:
                seen.setdefault(m.content_hash, []).append(m)
            scanned += len(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        return seen


def _indexed_text(c: Candidate) -> str:
    """`Memory.search_text()` of the memory `c` would become (title, content, normalised tags)."""
    tags = " ".join(dict.fromkeys(t.strip().lower() for t in c.tags if t.strip()))
    return "\n".join(p for p in [(c.title or "").strip(), c.content.strip(), tags] if p)


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine of two vectors (an embedder's are unit length already; a stored one may be float32)."""
    if len(a) != len(b):  # two models' vectors (a swap of models mid-run) are never alike
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' words."""
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0
