"""Where the user's Cairn files live, and which server and key the client side uses.

One rule for the CLI, the hooks and `cairn serve`: `CAIRN_HOME`, else the platform's user data dir; the
server URL and key from `CAIRN_URL` / `CAIRN_API_KEY`, else `<home>/config.toml`. Standard library only
(platformdirs when no CAIRN_HOME is set): the hooks import this on the agent's critical path.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8787"


def default_home() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("cairn", appauthor=False))


def cairn_home(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    home = environ.get("CAIRN_HOME")
    return Path(home) if home else default_home()


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    return cairn_home(environ) / "config.toml"


def server_and_key(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """(url, key): the environment wins over the config file, which `cairn serve` writes on first run."""
    environ = os.environ if environ is None else environ
    try:
        data = tomllib.loads(config_path(environ).read_text()).get("server", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        data = {}
    url = environ.get("CAIRN_URL") or data.get("url") or DEFAULT_URL
    return str(url), environ.get("CAIRN_API_KEY") or data.get("api_key")
