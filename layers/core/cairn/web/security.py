"""Web UI sessions: a signed, short-lived cookie naming the API key (never its secret), and CSRF tokens.

The cookie holds `team|key id|expiry|nonce`, base64url-encoded and signed with HMAC-SHA256 under the
server's UI secret (a private file in the Cairn home locally, CAIRN_UI_SECRET in AWS). It is HttpOnly,
SameSite=Strict, and Secure when the request came over HTTPS. Every request checks the key again
through `KeyService.principal_for_key`, so a revoked or expired key signs its sessions out at once.

CSRF: a synchronizer token derived from the cookie (HMAC of "csrf|" + the cookie payload) goes into
every form and is checked on every POST. Before sign-in, a short-lived random login cookie plays the
same role for the sign-in form.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from fastapi import Request
from fastapi.responses import Response

SESSION_COOKIE = "cairn_ui"
LOGIN_COOKIE = "cairn_ui_login"
SESSION_TTL_S = 2 * 3600
LOGIN_TTL_S = 15 * 60
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


@dataclass(frozen=True, slots=True)
class UiSession:
    team_id: str
    key_id: str
    expires_at: int
    payload: str  # the signed part of the cookie; CSRF tokens are derived from it


def _sign(secret: bytes, purpose: str, value: str) -> str:
    mac = hmac.new(secret, f"{purpose}|{value}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def issue_session(secret: bytes, team_id: str, key_id: str, now: float | None = None) -> str:
    expires = int((now or time.time()) + SESSION_TTL_S)
    payload = _b64(f"{team_id}|{key_id}|{expires}|{secrets.token_urlsafe(12)}")
    return f"{payload}.{_sign(secret, 'session', payload)}"


def read_session(secret: bytes, cookie: str | None, now: float | None = None) -> UiSession | None:
    """The session a cookie names, or None when it is missing, forged, malformed or expired."""
    if not cookie or len(cookie) > 1024 or cookie.count(".") != 1:
        return None
    payload, signature = cookie.split(".")
    if not hmac.compare_digest(signature, _sign(secret, "session", payload)):
        return None
    try:
        team_id, key_id, expires, _nonce = _unb64(payload).split("|")
        expires_at = int(expires)
    except ValueError:
        return None
    if expires_at <= (now or time.time()) or not _is_id(team_id) or not _is_id(key_id):
        return None
    return UiSession(team_id=team_id, key_id=key_id, expires_at=expires_at, payload=payload)


def csrf_token(secret: bytes, session: UiSession) -> str:
    return _sign(secret, "csrf", session.payload)


def login_csrf_token(secret: bytes, nonce: str) -> str:
    return _sign(secret, "login", nonce)


def tokens_match(expected: str, presented: str | None) -> bool:
    return bool(presented) and hmac.compare_digest(expected.encode(), (presented or "").encode())


def is_https(request: Request) -> bool:
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int, path: str) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=path,
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )


def clear_cookie(response: Response, request: Request, name: str, path: str) -> None:
    response.delete_cookie(name, path=path, httponly=True, samesite="strict", secure=is_https(request))


def _is_id(value: str) -> bool:
    return 0 < len(value) <= 100 and set(value) <= _ID_CHARS
