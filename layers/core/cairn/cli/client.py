"""A small HTTP client for the Cairn API, used by the CLI commands.

It raises typed errors (`BadUrl`, `ApiError`, `NotCairn`, httpx's transport errors) and lets them
through: `cairn.cli.errors` turns each type into the one line the user sees.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx

from cairn.capture.quota import retry_after_seconds
from cairn.cli import config
from cairn.cli.errors import ApiError, BadUrl, NotCairn

__all__ = ["ApiError", "CairnClient", "check_url"]


def check_url(url: str, source: str = "--url") -> str:
    """The URL without a trailing slash, or `BadUrl` when it is not http(s)://host[:port]."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise BadUrl(url, source) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise BadUrl(url, source)
    return url.rstrip("/")


def _url_source(flag: str | None) -> str:
    if flag:
        return "--url"
    if os.environ.get("CAIRN_URL"):
        return "CAIRN_URL"
    return f"the url in {config.config_path()}"


class CairnClient:
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        cfg = config.load()
        self.url = check_url(url or cfg.url or "http://127.0.0.1:8787", _url_source(url))
        self.api_key = api_key or cfg.api_key
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self._http.request(method, path, **kwargs)
        if resp.status_code >= 400:
            raise self._error(resp)
        if resp.status_code == 204:
            return None
        try:
            return resp.json()
        except ValueError:
            raise NotCairn(self.url, f"{method} {path} answered {resp.status_code}, not JSON") from None

    def stream_lines(self, path: str) -> Iterator[str]:
        with self._http.stream("GET", path) as resp:
            if resp.status_code >= 400:
                resp.read()
                raise self._error(resp)
            yield from resp.iter_lines()

    def _error(self, resp: httpx.Response) -> ApiError:
        # a 429 (the team over its quota, or throttled) says when to come back
        wait = retry_after_seconds(resp.headers.get("Retry-After")) if resp.status_code == 429 else None
        try:
            err = resp.json()["error"]
            return ApiError(resp.status_code, str(err["code"]), str(err["message"]), self.url, wait)
        except (ValueError, KeyError, TypeError):
            text = " ".join(resp.text.split())[:200] or resp.reason_phrase
            return ApiError(resp.status_code, "http_error", text, self.url, wait)

    def close(self) -> None:
        self._http.close()


def dumps(doc: Any) -> str:
    """The API's JSON as `--json` prints it: one document, indented, non-ASCII kept."""
    return json.dumps(doc, indent=2, ensure_ascii=False)
