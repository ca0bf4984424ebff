"""A small HTTP client for the Cairn API, shared by the CLI commands and the hooks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from cairn.cli import config


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} ({status} {code})")
        self.status, self.code, self.message = status, code, message


class CairnClient:
    def __init__(self, url: str | None = None, api_key: str | None = None, timeout: float = 30.0) -> None:
        cfg = config.load()
        self.url = (url or cfg.url or "http://127.0.0.1:8787").rstrip("/")
        key = api_key or cfg.api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self._http.request(method, path, **kwargs)
        if resp.status_code >= 400:
            try:
                err = resp.json()["error"]
                raise ApiError(resp.status_code, err["code"], err["message"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(resp.status_code, "http_error", resp.text[:300]) from None
        return None if resp.status_code == 204 else resp.json()

    def stream_lines(self, path: str) -> Iterator[str]:
        with self._http.stream("GET", path) as resp:
            if resp.status_code >= 400:
                resp.read()
                raise ApiError(resp.status_code, "http_error", resp.text[:300])
            yield from resp.iter_lines()

    def close(self) -> None:
        self._http.close()
