"""Teams and API keys: create, authenticate, list, revoke.

A key's secret is shown once and stored only as its SHA-256 (secrets are 200 random bits, so a fast
hash is as strong as a slow one and keeps authentication cheap). Authentication looks the hash up in
the index and compares it again in constant time, so nothing about a near-miss leaks through timing.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from cairn.domain.audit import AuditAction
from cairn.domain.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from cairn.domain.ids import new_id
from cairn.domain.models import ApiKey, KeyScope, Principal, Team, utcnow
from cairn.domain.ports import NoTeamQuotas, TeamQuotas, TeamRepository
from cairn.services.audit import AuditTrail

log = logging.getLogger(__name__)
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is kept to the minute: no write per request
SECRET_PREFIX = "cairn_"  # noqa: S105 - a public marker, not a secret
_MAX_TTL = timedelta(days=3650)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(25)


class KeyService:
    def __init__(
        self,
        teams: TeamRepository,
        clock: Callable[[], datetime] = utcnow,
        quotas: TeamQuotas | None = None,
        audit: AuditTrail | None = None,
    ) -> None:
        self._teams = teams
        self._audit = audit or AuditTrail()
        self._clock = clock
        self._quotas = quotas or NoTeamQuotas()

    def create_team(self, name: str, admin_member: str) -> tuple[Team, ApiKey, str]:
        """A new team with its first admin key; the secret is returned once."""
        name = name.strip()
        if not name or len(name) > 100:
            raise InvalidInput("team name must be 1-100 characters")
        team = Team(id=new_id("team"), name=name, created_at=self._clock())
        # the quota first: in AWS every authorized route requires the team's usage-plan key, so a team
        # stored without one could not make a single request; a failure here leaves nothing behind
        self._quotas.provision(team.id, team.name)
        self._teams.add_team(team)
        key, secret = self._issue(team.id, admin_member, "admin", frozenset({KeyScope.ADMIN}), None)
        self._audit.record_as(team.id, key.member, key.id, AuditAction.TEAM_CREATE, team.id)
        return team, key, secret

    def provision_quotas(self) -> int:
        """Give every team its quota (teams created before per-team quotas); returns how many teams."""
        teams = self._teams.list_teams()
        for team in teams:
            self._quotas.provision(team.id, team.name)
        return len(teams)

    def create_key(
        self,
        caller: Principal,
        member: str,
        name: str,
        scopes: frozenset[KeyScope],
        expires_in: timedelta | None = None,
        projects: frozenset[str] | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key; with `projects`, one that reads and writes only those projects (`Principal`)."""
        self._require_admin(caller)
        if not scopes:
            raise InvalidInput("a key needs at least one scope")
        if expires_in is not None and not (timedelta(0) < expires_in <= _MAX_TTL):
            raise InvalidInput("expiry must be in the future and within 10 years")
        key, secret = self._issue(caller.team_id, member, name, scopes, expires_in, _check_projects(projects))
        details = {"member": key.member, "scopes": sorted(s.value for s in scopes)}
        if key.projects is not None:
            details["projects"] = sorted(key.projects)
        self._audit.record(caller, AuditAction.KEY_CREATE, key.id, details=details)
        return key, secret

    def list_keys(self, caller: Principal) -> list[ApiKey]:
        self._require_admin(caller)
        return sorted(self._teams.list_keys(caller.team_id), key=lambda k: (k.created_at, k.id))

    def revoke_key(self, caller: Principal, key_id: str) -> ApiKey:
        self._require_admin(caller)
        key = self._teams.get_key(caller.team_id, key_id)
        if key is None:
            raise NotFound(f"no API key {key_id}")
        if key.revoked_at is None:
            key = replace(key, revoked_at=self._clock())
            self._teams.put_key(key)
            self._audit.record(caller, AuditAction.KEY_REVOKE, key.id, details={"member": key.member})
        return key

    def authenticate(self, secret: str | None, *, record_use: bool = True) -> Principal:
        """The key's principal. `record_use` keeps `last_used_at` (at most one write per key per
        LAST_USED_RESOLUTION); the read-only API Gateway authorizer passes False."""
        if not secret:
            raise Unauthenticated("an API key is required (Authorization: Bearer <key> or X-API-Key)")
        presented = hash_secret(secret.strip())
        key = self._teams.key_by_hash(presented)
        if key is None or not hmac.compare_digest(key.key_hash, presented):
            raise Unauthenticated("invalid API key")
        now = self._clock()
        if key.revoked_at is not None:
            raise Unauthenticated("this API key has been revoked")
        if key.expires_at is not None and now >= key.expires_at:
            raise Unauthenticated("this API key has expired")
        if record_use:
            self._note_use(key, now)
        return key.principal()

    def _note_use(self, key: ApiKey, now: datetime) -> None:
        if key.last_used_at is not None and now - key.last_used_at < LAST_USED_RESOLUTION:
            return
        try:
            self._teams.touch_key(key, now)
        except Exception:  # bookkeeping: a failed write must never refuse a valid key
            log.warning("could not record the use of API key %s", key.id, exc_info=True)

    def principal_for_key(self, team_id: str, key_id: str) -> Principal:
        """The principal of a key named by id (a signed web UI session carries it, never the secret);
        refused once the key is revoked or expired, so revoking a key signs its UI sessions out."""
        key = self._teams.get_key(team_id, key_id)
        if key is None or not key.is_active(self._clock()):
            raise Unauthenticated("this API key is no longer active")
        return key.principal()

    def _issue(
        self,
        team_id: str,
        member: str,
        name: str,
        scopes: frozenset[KeyScope],
        ttl: timedelta | None,
        projects: frozenset[str] | None = None,
    ) -> tuple[ApiKey, str]:
        member, name = member.strip(), name.strip()
        if not member or len(member) > 100 or not name or len(name) > 100:
            raise InvalidInput("member and key name must be 1-100 characters")
        now = self._clock()
        secret = _new_secret()
        key = ApiKey(
            id=new_id("key"),
            team_id=team_id,
            member=member,
            name=name,
            key_hash=hash_secret(secret),
            prefix=secret[: len(SECRET_PREFIX) + 6],
            scopes=scopes,
            created_at=now,
            expires_at=now + ttl if ttl else None,
            projects=projects,
        )
        self._teams.add_key(key)
        return key, secret

    @staticmethod
    def _require_admin(caller: Principal) -> None:
        if not caller.allows(KeyScope.ADMIN):
            raise Forbidden("this needs an admin key")
        # a key limited to projects could otherwise issue itself a key for every project
        if caller.projects is not None:
            raise Forbidden("managing keys needs an admin key for every project of the team")


MAX_KEY_PROJECTS = 100


def _check_projects(projects: frozenset[str] | None) -> frozenset[str] | None:
    if projects is None:
        return None
    cleaned = frozenset(p.strip() for p in projects)
    if not cleaned or "" in cleaned:
        raise InvalidInput("a key limited to projects needs at least one project, none of them empty")
    if len(cleaned) > MAX_KEY_PROJECTS or any(len(p) > 300 for p in cleaned):
        raise InvalidInput(f"a key reaches at most {MAX_KEY_PROJECTS} projects of 300 characters each")
    return cleaned
