"""The dream pass: one project's memories consolidated across its sessions.

Ingest consolidation (`consolidation.py`) sees one session's candidates against what is stored. The dream
pass sees the project's life: every current memory but transcript excerpts, ordered by the sessions that
said them. Run at each session's end (the `dream` stage) and on a schedule (`cairn serve`'s timer, an
EventBridge schedule in AWS), the same code in both modes. In order, it
1. supersedes what a later session changed (`subjects.changed`): the older memory is closed and points
   at the newer one (`superseded_by`, a `supersedes` relation), so recall and the block show the current;
2. folds a fact, convention, preference, decision or procedure restated in several sessions into ONE
   memory, the newest wording, which carries `details.evidence` {sessions, count, first_seen, last_seen}
   (and a procedure's runs of them all); the others are superseded into it, kept as history; and a
   person's preference the agent stated as a rule as it put it in place into that rule;
3. closes open items (`open_items`) a later session finished: `details.closed_items` names each and the
   session that closed it; when all are closed the memory's validity ends with `details.closed_by` (an
   account that left its commit or deploy to the person ends once a later `git status` shows the files
   committed: recall stops offering "ready for you to commit" weeks after it was);
4. folds one command left failing by several sessions into the newest of them, with its evidence (as
   step 2), and leaves behind a failure no later session met again (`open_items.met`: ran its command
   or hit its error) once `LEFT_BEHIND_AFTER` sessions of the same member have come after it: its
   validity ends with `details.left_behind` naming them, so recall and the digest stop showing it as
   still failing (a failure that persists is met again and stays; the newest session's failures are
   the block's);
5. demotes a procedure whose latest session only failed after earlier successes (`details.demoted`,
   lower confidence), and restores it when it works again;
6. names the side branch on a session's accounts of work it committed only to a branch the project
   did not take up (`details.side_branch`), and takes the mark back once the branch is merged;
7. ends a fact or decision that gives as current a value (a number with its unit, an address, a URL) a
   later session's edits took out of the project's files (`reading.edited_values`): `City: 15-25km`
   edited to `City: 50km` ends "a city search uses a 15-25km radius", with `details.edited_out`.

Idempotent: every write sets a value computed from what is stored (a union of sessions, a closing), so a
second pass over the same memories writes nothing. Incremental: a watermark per project (a small blob)
says when the last pass started; only pairs with a memory written since are compared. Crash-safe: each
write is one memory; a survivor takes its evidence before the others are closed into it and a relation is
added before the memory it links is closed, so a pass killed anywhere and run again ends as one that was
not killed. The salience the block sorts by reads what this writes (`cairn.domain.salience`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cairn.domain.models import KeyScope, Memory, MemoryFilter, MemoryKind, Principal, Scope, aware
from cairn.domain.vocabulary import Tag
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.reading.edited_values import stated_values
from cairn.pipeline.remembering.open_items import (
    Evidence,
    after_in_session,
    closer,
    evidence_of,
    failure_of,
    handover_of,
    items_of,
    met,
    runs_by_session,
)
from cairn.pipeline.remembering.subjects import (
    changed,
    restates,
    same_command,
    same_procedure,
)
from cairn.services.memories import MemoryPatch
from cairn.services.project_block import restated_by_rule, side_sessions, work_report
from cairn.services.uploads import project_slug

FOLD_KINDS = frozenset(
    {MemoryKind.FACT, MemoryKind.PATTERN, MemoryKind.PREFERENCE, MemoryKind.DECISION, MemoryKind.PROCEDURE}
)
CHANGE_KINDS = frozenset({MemoryKind.FACT, MemoryKind.PATTERN, MemoryKind.PREFERENCE, MemoryKind.DECISION})
SKIPPED = frozenset({MemoryKind.EXCERPT})
# a session's own story (its summary's sections, a plan, what it retold): history of that session, never
# a standing statement a later session restates or changes
STORY_TAGS = frozenset({Tag.SUMMARY, Tag.RETOLD, Tag.PLAN, Tag.TODO, Tag.TRANSCRIPT})
DEMOTED_CONFIDENCE = 0.3
# later sessions, none of which met a failure again, before it counts as left behind: one session may
# work elsewhere and come back; two that never touch it have moved on
LEFT_BEHIND_AFTER = 2
MARGIN = timedelta(minutes=10)  # a write committed just after the listing is looked at again next pass
PAGE = 500
_PASSES = threading.Lock()


def state_key(team_id: str, project: str) -> str:
    return f"teams/{team_id}/projects/{project_slug(project)}/dream.json"


def dream_principal(team_id: str) -> Principal:
    return Principal(team_id, "cairn-dream", "dream", frozenset({KeyScope.WRITE}))


@dataclass
class DreamOutcome:
    superseded: list[list[str]] = field(default_factory=list)  # [old, current]
    folded: list[list[str]] = field(default_factory=list)  # [restatement, the one kept]
    closed: list[dict[str, str]] = field(default_factory=list)  # {memory, item, closed_by}
    left_behind: list[str] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    evidenced: list[str] = field(default_factory=list)
    side_branch: list[str] = field(default_factory=list)  # work reports (un)marked as a side branch's
    edited_out: list[str] = field(default_factory=list)  # facts whose value a later edit took out
    skipped: bool = False  # nothing written since the last pass

    def counts(self) -> dict[str, int]:
        return {
            "superseded": len(self.superseded),
            "folded": len(self.folded),
            "closed": len(self.closed),
            "left_behind": len(self.left_behind),
            "demoted": len(self.demoted),
            "restored": len(self.restored),
            "evidenced": len(self.evidenced),
            "side_branch": len(self.side_branch),
            "edited_out": len(self.edited_out),
        }

    @property
    def writes(self) -> int:
        return sum(self.counts().values())


def dream(
    deps: PipelineDeps,
    team_id: str,
    project: str,
    full: bool = False,
    after_write: Callable[[], None] | None = None,
) -> DreamOutcome:
    """One pass over `project`'s current memories (all of them with `full`, else those written since the
    last pass against all). `after_write` is called after each write (the kill -9 test's hook)."""
    with _PASSES:  # one pass at a time in a process: the timer and a session's end may meet
        return _dream(deps, team_id, project, full, after_write or (lambda: None))


def _dream(
    deps: PipelineDeps, team_id: str, project: str, full: bool, after_write: Callable[[], None]
) -> DreamOutcome:
    started = deps.clock()
    key = state_key(team_id, project)
    state = _load_state(deps, key)
    since = None if full else _when(state.get("watermark"))
    dreaming = _Pass(deps, team_id, project, since)
    if since is not None and not dreaming.fresh:
        return DreamOutcome(skipped=True)
    dreaming.after_write = after_write
    out = dreaming.run()
    state = {"watermark": (started - MARGIN).isoformat(), "passes": int(state.get("passes", 0)) + 1}
    deps.blobs.put(key, json.dumps({**state, "last": out.counts()}).encode(), "application/json")
    return out


def _load_state(deps: PipelineDeps, key: str) -> dict[str, Any]:
    if not deps.blobs.exists(key):
        return {}
    try:
        loaded = json.loads(deps.blobs.get(key))
    except ValueError:  # a torn or foreign state only costs a full pass
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _when(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


class _Pass:
    def __init__(self, deps: PipelineDeps, team_id: str, project: str, since: datetime | None) -> None:
        self.deps, self.team_id, self.project = deps, team_id, project
        self.caller = dream_principal(team_id)
        self.out = DreamOutcome()
        self.memories = self._current()
        self.new = {m.id for m in self.memories if since is None or m.updated_at > since}
        self.fresh = bool(self.new)
        self._times: dict[str, datetime] = {}
        self.side: dict[str, str] = {}  # sessions whose work went only to a side branch (step 6)
        # hook for the kill -9 test: called after every write
        self.after_write: Callable[[], None] = lambda: None

    def run(self) -> DreamOutcome:
        self._supersede_changed()
        self._fold_restated()
        self._fold_stated_rules()
        self._close_open_items()
        self._fold_failures()
        self._leave_behind_failures()
        self._procedures()
        self._name_side_branch_work()
        self._end_edited_out_values()
        return self.out

    # --- reading ----------------------------------------------------------------------------
    def _current(self) -> list[Memory]:
        kinds = frozenset(k for k in MemoryKind if k not in SKIPPED)
        flt = MemoryFilter(
            project=self.project, include_team_scope=False, kinds=kinds, scopes=frozenset({Scope.PROJECT})
        )
        found: list[Memory] = []
        cursor = None
        while True:
            page = self.deps.memories.list(self.caller, flt, limit=PAGE, cursor=cursor)
            found.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return found

    def _session_time(self, session_id: str | None, fallback: datetime) -> datetime:
        if not session_id:
            return fallback
        if session_id not in self._times:
            s = self.deps.sessions.get(self.team_id, session_id)
            self._times[session_id] = (s and s.ran_at) or fallback
        return self._times[session_id]

    def _time(self, m: Memory) -> datetime:
        return self._session_time(m.provenance.session_id, m.created_at)

    def _order(self, ms: list[Memory]) -> list[Memory]:
        return sorted(ms, key=lambda m: (aware(self._time(m)), aware(m.created_at), m.id))

    def _live(self, kinds: frozenset[MemoryKind]) -> list[Memory]:
        return self._order([m for m in self.memories if m.kind in kinds and m.is_current])

    def _statements(self, kind: MemoryKind) -> list[Memory]:
        """Current memories of `kind` that state something standing: not a session's story, and not a
        description of one thing as it was read (`details.about`: ingest replaces those itself)."""
        return [
            m
            for m in self._live(frozenset({kind}))
            if not STORY_TAGS & set(m.tags) and not m.details.get("about")
        ]

    def _touched(self, *ms: Memory) -> bool:
        return any(m.id in self.new for m in ms)

    # --- writing ----------------------------------------------------------------------------
    def _replace(self, memory: Memory) -> None:
        self.memories = [memory if m.id == memory.id else m for m in self.memories]
        self.new.add(memory.id)
        self.after_write()

    def _update(self, m: Memory, details: dict[str, Any], confidence: float | None = None) -> Memory:
        patch = MemoryPatch(details=details, confidence=confidence)
        updated = self.deps.memories.update(self.caller, m.id, patch)
        self._replace(updated)
        return updated

    def _close_into(self, old: Memory, current: Memory, details: dict[str, Any]) -> None:
        linked = any(
            r.predicate == "supersedes" and r.target_id == old.id
            for r in self.deps.relations.for_memory(self.team_id, current.id, "out")
        )
        if not linked:  # the link first: a pass killed between the two adds it no second time
            self.deps.memories.relate(self.caller, current.id, "supersedes", old.id)
            self.after_write()
        closed = self.deps.memories.close(self.caller, old.id, details, superseded_by=current.id)
        self._replace(closed)

    # --- 1. a later session changed it --------------------------------------------------------
    def _supersede_changed(self) -> None:
        for kind in CHANGE_KINDS:
            live = self._statements(kind)
            for i, old in enumerate(live):
                for new in reversed(live[i + 1 :]):  # the newest change wins
                    if (
                        new.is_current
                        and self._touched(old, new)
                        and self._later(old, new)
                        and changed(old.content, new.content)
                    ):
                        details = {**old.details, "changed_in": new.provenance.session_id}
                        self._close_into(old, new, details)
                        self.out.superseded.append([old.id, new.id])
                        break

    def _later(self, old: Memory, new: Memory) -> bool:
        a, b = old.provenance.session_id, new.provenance.session_id
        return bool(a and b and a != b and aware(self._time(old)) <= aware(self._time(new)))

    # --- 2. restated in several sessions ------------------------------------------------------
    def _fold_restated(self) -> None:
        for kind in FOLD_KINDS:
            live = self._statements(kind)
            pairs = [
                (a, b)
                for i, a in enumerate(live)
                for b in live[i + 1 :]
                if self._touched(a, b) and self._same(a, b)
            ]
            groups = _groups(live, pairs)
            for group in groups.values():
                self._fold(self._order(group))

    def _same(self, a: Memory, b: Memory) -> bool:
        if a.provenance.session_id == b.provenance.session_id:
            return False  # ingest already merged what one session said twice (`consolidation.prepared`)
        if a.kind is MemoryKind.PROCEDURE and (a.details.get("command") or b.details.get("command")):
            # one command learned the same way (a build, a fix of one failure), however each session
            # happened to run it (`subjects.same_command`): its runs add up
            return same_procedure(_shape(a), _shape(b))
        if Tag.CHECKS in a.tags and Tag.CHECKS in b.tags:
            return _same_steps(a.details.get("steps"), b.details.get("steps")) or restates(
                a.content, b.content
            )
        return restates(a.content, b.content)

    def _fold(self, group: list[Memory]) -> None:
        keep = group[-1]  # the newest wording
        details = dict(keep.details)
        sessions: list[str] = []
        runs: dict[str, list[int]] = {}
        for m in group:
            for s in [*(m.details.get("sessions") or []), m.provenance.session_id]:
                if s and s not in sessions:
                    sessions.append(s)
            runs.update(runs_by_session(m))
        ordered = sorted(sessions, key=lambda s: aware(self._session_time(s, keep.created_at)))
        if len(group) == 1 and len(ordered) < 2:
            return  # said once: nothing to fold, no evidence beyond its provenance
        details["sessions"] = ordered
        if len(ordered) > 1:
            times = [self._session_time(s, keep.created_at) for s in ordered]
            details["evidence"] = {
                "sessions": ordered,
                "count": len(ordered),
                "first_seen": min(times, key=aware).isoformat(),
                "last_seen": max(times, key=aware).isoformat(),
            }
        if runs:
            details["runs"] = runs
            details["success_count"] = sum(r[0] for r in runs.values())
            details["failure_count"] = sum(r[1] for r in runs.values())
        confidence = max(m.confidence for m in group)
        if details != dict(keep.details) or confidence != keep.confidence:
            keep = self._update(keep, details, confidence)  # evidence first, then the closings
            self.out.evidenced.append(keep.id)
        for m in group[:-1]:
            self._close_into(m, keep, {**m.details, "folded_into": keep.id})
            self.out.folded.append([m.id, keep.id])

    # --- 2b. a person's rule the agent stated in full as it put it in place ---------------------
    def _fold_stated_rules(self) -> None:
        """A person's preference that the agent stated as a rule naming all it names, in that session
        or a later one (`project_block.restated_by_rule`: "the links should go to x.org, not api.x.org"
        is "ALWAYS use `https://x.org`, NEVER `api.x.org`"), is one memory: the agent's fuller wording,
        with the person's sessions as its evidence; the person's words are its history."""
        for asked in self._statements(MemoryKind.PREFERENCE):
            # read afresh for each: a rule two preferences fold into keeps the first fold's evidence
            stated = next(
                (
                    f
                    for f in self._statements(MemoryKind.FACT)
                    if self._touched(asked, f)
                    and aware(self._time(asked)) <= aware(self._time(f))
                    and restated_by_rule(asked, [f])
                ),
                None,
            )
            if stated is not None:
                self._fold([asked, stated])

    # --- 3. open items a later session finished ------------------------------------------------
    def _close_open_items(self) -> None:
        evidence = [
            (self._time(m), ev) for m in self.memories if m.is_current and (ev := evidence_of(m)) is not None
        ]
        touched_evidence = any(ev.memory_id in self.new for _, ev in evidence)
        for m in self._order([m for m in self.memories if m.is_current and items_of(m)]):
            if not (touched_evidence or m.id in self.new):
                continue
            when = aware(self._time(m))
            commands = bool(m.kind is MemoryKind.EPISODE and m.details.get("command"))
            later = [
                ev
                for t, ev in sorted(evidence, key=lambda te: aware(te[0]))
                if (aware(t) > when and ev.session_id != m.provenance.session_id)
                or (commands and after_in_session(m, ev))
            ]
            if later:
                self._close_items(m, later)

    def _close_items(self, m: Memory, later: list[Evidence]) -> None:
        done = [dict(c) for c in m.details.get("closed_items") or []]
        already = {c.get("item") for c in done}
        items = items_of(m)
        is_command = m.kind is MemoryKind.EPISODE and bool(m.details.get("command"))
        handover = handover_of(m)
        found = []
        for item in items:
            if item in already:
                continue
            if handover is not None and item == handover.item:
                ev = handover.taken_up(later)
            else:
                ev = closer(
                    item, is_command, later, str(m.details.get("error") or "") if is_command else None
                )
            if ev is not None:
                found.append({"item": item, "closed_by": ev.session_id, "evidence": ev.memory_id})
        if not found:
            return
        done += found
        details = {**m.details, "closed_items": done}
        for c in found:
            self.out.closed.append({"memory": m.id, "item": c["item"], "closed_by": c["closed_by"]})
        if {c["item"] for c in done} >= set(items):
            details["closed_by"] = found[-1]["closed_by"]
            self._replace(self.deps.memories.close(self.caller, m.id, details))
        else:
            self._update(m, details)

    # --- 4. failures the sessions after them never met again ----------------------------------
    def _fold_failures(self) -> None:
        """One command that several sessions left failing is one failure, the newest, with its
        evidence: recall shows it once, as failing in N sessions."""
        command = {m.id: f[0] for m in self.memories if m.is_current and (f := failure_of(m)) is not None}
        failing = self._order([m for m in self.memories if m.id in command])
        pairs = [
            (a, b)
            for i, a in enumerate(failing)
            for b in failing[i + 1 :]
            if self._touched(a, b)
            and a.provenance.session_id != b.provenance.session_id
            and same_command(command[a.id], command[b.id])
        ]
        for group in _groups(failing, pairs).values():
            self._fold(self._order(group))

    def _leave_behind_failures(self) -> None:
        failures = [(m, f) for m in self.memories if m.is_current and (f := failure_of(m)) is not None]
        if not failures:
            return
        sessions: dict[str, datetime] = {}  # the sessions that taught the project something, and when
        member: dict[str, str | None] = {}  # whose session it was (None: not known)
        seen: dict[str, tuple[set[str], set[str]]] = {}  # the commands and errors each one met
        new_in: set[str] = set()
        for m in self.memories:
            s = m.provenance.session_id
            if not s:
                continue
            sessions.setdefault(s, aware(self._time(m)))
            member[s] = member.get(s) or m.provenance.member
            commands, errors = seen.setdefault(s, (set(), set()))
            ran, hit = met(m)
            commands |= ran
            errors |= hit
            if m.id in self.new:
                new_in.add(s)
        for m, (command, trouble) in failures:
            when, whose = aware(self._time(m)), member.get(m.provenance.session_id or "")
            # the sessions of the member who left it failing: a teammate working elsewhere in the
            # project has not moved past another's broken checkout
            after = sorted(
                (
                    s
                    for s, t in sessions.items()
                    if t > when and not (whose and member[s] and member[s] != whose)
                ),
                key=lambda s: sessions[s],
            )
            if len(after) < LEFT_BEHIND_AFTER or not (m.id in self.new or new_in & set(after)):
                continue
            if any(trouble in seen[s][1] or any(same_command(command, c) for c in seen[s][0]) for s in after):
                continue  # met again: closed by a later good run (step 3), or still failing
            details = {**m.details, "left_behind": {"sessions": after[:LEFT_BEHIND_AFTER]}}
            self._replace(self.deps.memories.close(self.caller, m.id, details))
            self.out.left_behind.append(m.id)

    # --- 5. procedures that stopped working ---------------------------------------------------
    def _procedures(self) -> None:
        for m in self._live(frozenset({MemoryKind.PROCEDURE})):
            runs = runs_by_session(m)
            if m.id not in self.new or len(runs) < 2:
                continue
            order = sorted(runs, key=lambda s: aware(self._session_time(s, m.created_at)))
            last = order[-1]
            worked_before = any(runs[s][0] > 0 for s in order[:-1])
            failing = runs[last][0] == 0 and runs[last][1] > 0 and worked_before
            demoted = m.details.get("demoted")
            if failing and not demoted:
                details = {
                    **m.details,
                    "demoted": {"since": last, "failures": runs[last][1], "confidence_before": m.confidence},
                }
                self._update(m, details, min(m.confidence, DEMOTED_CONFIDENCE))
                self.out.demoted.append(m.id)
            elif demoted and runs[last][0] > 0:
                details = {k: v for k, v in m.details.items() if k != "demoted"}
                before = demoted.get("confidence_before") if isinstance(demoted, dict) else None
                self._update(m, details, float(before) if before is not None else m.confidence)
                self.out.restored.append(m.id)

    # --- 6. work that lives on a branch the project did not take up ----------------------------
    def _name_side_branch_work(self) -> None:
        """A session's accounts of work it committed only to a branch the project did not take up
        (`project_block.side_sessions`: not the main line, never merged or named again) name that
        branch (`details.side_branch`), which recall shows: the work was done in the checkout, then
        committed to the branch, so its lines cannot say it. Judged again each pass: a later session
        that merges the branch or works on it takes the mark back."""
        git = [m for m in self._live(frozenset({MemoryKind.EPISODE})) if Tag.GIT in m.tags]
        order = list(dict.fromkeys(m.provenance.session_id for m in self._order(self.memories)))
        side = side_sessions(git, {sid: age for age, sid in enumerate(reversed(order)) if sid})
        self.side = side
        for m in self._live(frozenset({MemoryKind.FACT})):
            branch = side.get(m.provenance.session_id or "") if work_report(m) else None
            if m.details.get("side_branch") != branch:
                details = {k: v for k, v in m.details.items() if k != "side_branch"}
                if branch:
                    details["side_branch"] = branch
                self._update(m, details)
                self.out.side_branch.append(m.id)

    # --- 7. values a later session's edits took out of the files ----------------------------
    def _end_edited_out_values(self) -> None:
        """A fact or decision that gives as current a value a later session's edits took out of the
        project's files and put back nowhere (its reflection's `details.edited_out`) is no longer
        current: its validity ends with `details.edited_out` naming the value and the session. A
        session whose work went only to a side branch (step 6) changed nothing the project runs."""
        removed = [
            (aware(self._time(r)), r, set(map(str, r.details["edited_out"])))
            for r in self._live(frozenset({MemoryKind.REFLECTION}))
            if isinstance(r.details.get("edited_out"), list) and r.provenance.session_id not in self.side
        ]
        if not removed:
            return
        for m in self._statements(MemoryKind.FACT) + self._statements(MemoryKind.DECISION):
            said = stated_values(m.content)
            if not said or m.pinned:
                continue
            when = aware(self._time(m))
            for t, reflection, gone in removed:
                sid = reflection.provenance.session_id
                if t <= when or sid == m.provenance.session_id or not self._touched(m, reflection):
                    continue
                if hit := sorted(said & gone):
                    details = {**m.details, "edited_out": {"value": hit[0], "session": sid}}
                    self._replace(self.deps.memories.close(self.caller, m.id, details))
                    self.out.edited_out.append(m.id)
                    break


def _groups(items: list[Memory], pairs: list[tuple[Memory, Memory]]) -> dict[str, list[Memory]]:
    """The connected groups of `items` that `pairs` join (union-find), each in the items' order."""
    parent = {m.id: m.id for m in items}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[root(a.id)] = root(b.id)
    groups: dict[str, list[Memory]] = {}
    for m in items:
        groups.setdefault(root(m.id), []).append(m)
    return groups


def _shape(m: Memory) -> tuple[str, dict[str, Any], set[str]]:
    return m.content, dict(m.details), set(m.tags)


def _same_steps(a: object, b: object) -> bool:
    """Two lists of checks that run the same commands, each however its session ran it."""
    if not isinstance(a, list) or not isinstance(b, list) or not a or len(a) != len(b):
        return False
    left = [str(x) for x in b]
    for step in (str(x) for x in a):
        match = next((i for i, other in enumerate(left) if same_command(step, other)), None)
        if match is None:
            return False
        left.pop(match)
    return True
