"""The user's Cairn config (`<home>/config.toml`): which server to talk to and with which key.

Written by `cairn serve` on first run so that the CLI and the hooks work with no flags; the file is
readable only by the user because it holds an API key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomli_w

from cairn import userdirs
from cairn.atomic import write_atomic


def home() -> Path:
    return userdirs.cairn_home()


def config_path() -> Path:
    return userdirs.config_path()


@dataclass(frozen=True)
class ClientConfig:
    url: str | None = None
    api_key: str | None = None


def load() -> ClientConfig:
    url, api_key = userdirs.server_and_key()
    return ClientConfig(url=url, api_key=api_key)


def save(url: str, api_key: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, tomli_w.dumps({"server": {"url": url, "api_key": api_key}}), mode=0o600)
    return path
