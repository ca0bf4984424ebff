"""The one map from what can go wrong in a CLI command to the one line the user sees, by error type.

Commands raise (or let through) typed errors; `CairnGroup` catches whatever escapes a command, prints
`error: <what happened> <how to fix it>` on stderr and exits 1, never a traceback (set `CAIRN_DEBUG=1` to
get one). A new failure mode gets one entry in `_EXPLAIN`, not a try/except in every command.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import httpx
import typer
from typer._click.exceptions import NoArgsIsHelpError, UsageError  # typer's own copy of click
from typer.core import TyperGroup

from cairn.capture.quota import over_quota_line
from cairn.capture.upload import UploadRefused, UploadUnavailable
from cairn.domain.errors import CairnError

EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A problem the user can fix, already worded as one line (what happened, and what to do)."""


class BadUrl(CliError):
    """A server URL that is not http(s)://host[:port]."""

    def __init__(self, url: str, source: str) -> None:
        super().__init__(f"{source} {url!r} is not an http(s) URL")
        self.url, self.source = url, source


class ApiError(Exception):
    """The server answered with an error status; `message` is its own one-line reason."""

    def __init__(
        self, status: int, code: str, message: str, url: str = "", retry_after: int | None = None
    ) -> None:
        super().__init__(f"{message} ({status} {code})")
        self.status, self.code, self.message, self.url = status, code, message, url
        self.retry_after = retry_after  # seconds, from a 429's Retry-After


class NotCairn(Exception):
    """Something answered at the URL, but not with Cairn's JSON."""

    def __init__(self, url: str, detail: str) -> None:
        super().__init__(detail)
        self.url = url


def _base(exc: httpx.RequestError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:  # no request attached
        return "the server"
    return f"{url.scheme}://{url.netloc.decode()}"


def _connect(exc: httpx.ConnectError) -> str:
    return f"cannot reach Cairn at {_base(exc)} — is `cairn serve` running? (or pass --url)"


def _timeout(exc: httpx.TimeoutException) -> str:
    return f"Cairn at {_base(exc)} did not answer in time — is the server overloaded or stuck?"


def _transport(exc: httpx.TransportError) -> str:
    return f"the connection to Cairn at {_base(exc)} failed: {exc or type(exc).__name__}"


def _bad_url(exc: httpx.InvalidURL | httpx.UnsupportedProtocol) -> str:
    return f"the server URL is not an http(s) URL ({exc}); pass --url http://host:port"


_HINTS = {
    401: " — check --key / CAIRN_API_KEY (run `cairn serve` once to create a local key)",
    403: " — this key lacks the scope for it; use an admin key or `cairn apikey create --scope ...`",
    413: " — the request is too large for the server",
}


def _api(exc: ApiError) -> str:
    if exc.status == 429:
        return f"{over_quota_line(exc.retry_after)} ({exc.message})"
    hint = _HINTS.get(exc.status, "")
    if exc.code == "outside_projects":
        hint = " — this key is limited to other projects; use a key for this project (`cairn apikey list`)"
    if exc.status >= 500:
        hint = " — see the server's log"
    return f"{exc.message} ({exc.status} {exc.code}){hint}"


def _not_cairn(exc: NotCairn) -> str:
    return f"the server at {exc.url} did not answer like Cairn ({exc}) — is --url right?"


def _os(exc: OSError) -> str:
    where = f" {exc.filename}" if exc.filename else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"no such file or folder:{where}"
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename} is a folder, not a file"
    if isinstance(exc, PermissionError):
        return f"permission denied:{where}"
    return f"{reason}:{where}" if where else reason


def _json(exc: json.JSONDecodeError) -> str:
    return f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"


def _unicode(exc: UnicodeDecodeError) -> str:
    return "the file is not UTF-8 text (a binary file?)"


def _upload(exc: UploadRefused | UploadUnavailable) -> str:
    if isinstance(exc.__cause__, httpx.HTTPError):
        return explain(exc.__cause__)
    verdict = "refused" if isinstance(exc, UploadRefused) else "could not take"
    return f"the server {verdict} the upload: {exc}"


def _domain(exc: CairnError) -> str:
    return exc.message


def _message(exc: BaseException) -> str:
    return str(exc)


# most specific first does not matter: lookup walks the exception's MRO
_EXPLAIN: dict[type[BaseException], Callable] = {
    CliError: _message,
    ApiError: _api,
    NotCairn: _not_cairn,
    CairnError: _domain,
    UploadRefused: _upload,
    UploadUnavailable: _upload,
    httpx.ConnectError: _connect,
    httpx.TimeoutException: _timeout,
    httpx.InvalidURL: _bad_url,
    httpx.UnsupportedProtocol: _bad_url,
    httpx.TransportError: _transport,
    json.JSONDecodeError: _json,
    UnicodeDecodeError: _unicode,
    OSError: _os,
}


def explain(exc: BaseException) -> str:
    """One line for any error: the mapped explanation, or its type and message for the unexpected."""
    for cls in type(exc).__mro__:
        if cls in _EXPLAIN:
            return _EXPLAIN[cls](exc)
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"unexpected {type(exc).__name__}{': ' + text if text else ''} (CAIRN_DEBUG=1 shows the traceback)"


def print_error(line: str) -> None:
    typer.echo(f"error: {line}", err=True)
    sys.stderr.flush()


class CairnGroup(TyperGroup):
    """The root command group: any error escaping a command becomes one `error:` line and exit 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            if isinstance(exc, NoArgsIsHelpError) or os.environ.get("CAIRN_DEBUG"):
                raise
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            print_error(f"{exc.format_message()} (see `{where} --help`)")
            raise typer.Exit(EXIT_USAGE) from None
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Exception as exc:
            if os.environ.get("CAIRN_DEBUG"):
                raise
            print_error(explain(exc))
            raise typer.Exit(EXIT_ERROR) from None
