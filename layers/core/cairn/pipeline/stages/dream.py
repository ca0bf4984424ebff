"""The dream stage: the session's project consolidated across its sessions, after consolidate and reflect.

Also the scheduled pass (`dream_all`): every project of every team that has memories written since its
last pass (the watermark makes the others a listing and nothing more). The local server runs it on a timer,
AWS on an EventBridge schedule through a one-task state machine; both call this module. The pass itself
is `cairn.pipeline.remembering.dream`; it is idempotent, so a stage retried or a session relearned runs
it again with no effect beyond what is new.
"""

from __future__ import annotations

import logging

from cairn.domain.ports import TeamRepository
from cairn.pipeline.deps import PipelineDeps
from cairn.pipeline.models import SessionRef
from cairn.pipeline.remembering.dream import DreamOutcome, dream

log = logging.getLogger(__name__)


def dream_session(deps: PipelineDeps, ref: SessionRef) -> dict[str, int]:
    """The pass over the project of a session that has just been learned; its counts."""
    session = deps.session(ref)
    if not session.project:
        return {}
    return dream(deps, session.team_id, session.project).counts()


def dream_all(deps: PipelineDeps, teams: TeamRepository) -> dict[str, int]:
    """The scheduled pass over every team's projects; totals, and how many projects it changed. A project
    that fails is logged and left for the next pass (the others still run)."""
    totals: dict[str, int] = {"projects": 0, "failed": 0}
    for team in teams.list_teams():
        projects = sorted({s.project for s in deps.sessions.iter_team(team.id) if s.project})
        for project in projects:
            try:
                out: DreamOutcome = dream(deps, team.id, project)
            except Exception:
                log.exception("the dream pass over project %s failed", project)
                totals["failed"] += 1
                continue
            if out.writes:
                totals["projects"] += 1
            for k, v in out.counts().items():
                totals[k] = totals.get(k, 0) + v
    return totals
