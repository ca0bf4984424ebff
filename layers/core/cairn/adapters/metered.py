"""A session repository that counts (`Metrics`) each session the pipeline settles as `learned`.

The pipeline marks a session learned through `SessionRepository.update`; counting there, not in the
pipeline's stages, counts every path that settles a session (Step Functions' reflect stage and the local
inline runner alike) exactly once per transition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cairn.domain.models import Session
from cairn.domain.ports import BusinessMetric, Metrics, SessionRepository


class MeteredSessionRepository:
    """A `SessionRepository` that counts `SessionsLearned` when an update turns a session learned."""

    def __init__(self, inner: SessionRepository, metrics: Metrics) -> None:
        self.inner = inner
        self._metrics = metrics

    def update(
        self, team_id: str, session_id: str, fn: Callable[[Session | None], Session | None]
    ) -> Session | None:
        before: list[str | None] = []

        def watched(session: Session | None) -> Session | None:
            before.append(session.status if session else None)  # the last call is the one that stuck
            return fn(session)

        result = self.inner.update(team_id, session_id, watched)
        if result is not None and result.status == "learned" and before and before[-1] != "learned":
            self._metrics.count(BusinessMetric.SESSIONS_LEARNED)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
