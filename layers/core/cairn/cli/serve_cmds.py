"""`cairn serve` (in the foreground or `--detach`ed), `cairn stop`, and `cairn service install`.

A running server writes `<home>/serve.pid` (its pid and URL) and removes it when it exits cleanly, so
`cairn stop` knows whom to signal and when it is done. The port is tried before anything is printed: a
second server fails with one line instead of half starting.
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import httpx
import typer

from cairn.atomic import write_atomic
from cairn.cli import config
from cairn.cli.errors import CliError
from cairn.cli.output import err, esc, out
from cairn.domain.errors import CairnError

log = logging.getLogger(__name__)

service_app = typer.Typer(
    no_args_is_help=True, help="Run `cairn serve` as a user service (systemd, launchd)."
)

Host = Annotated[str, typer.Option(help="Interface to bind")]
Port = Annotated[int, typer.Option(help="Port", min=1, max=65535)]
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("stop")(stop)
    app.add_typer(service_app, name="service")


# --- the pid file ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Running:
    pid: int
    url: str


def pid_path() -> Path:
    return config.home() / "serve.pid"


def read_pid() -> Running | None:
    try:
        doc = json.loads(pid_path().read_text())
        return Running(int(doc["pid"]), str(doc["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _write_pid(url: str) -> None:
    path = pid_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"pid": os.getpid(), "url": url}))


def _remove_pid() -> None:
    running = read_pid()
    if running is not None and running.pid == os.getpid():
        pid_path().unlink(missing_ok=True)


def check_port(host: str, port: int) -> None:
    """Fail with one line when the port cannot be bound (as uvicorn would bind it, SO_REUSEADDR)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise CliError(f"cannot bind {host!r}: not a known host or interface") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CliError(
                    f"port {port} is in use — is another `cairn serve` running? (`--port` to pick another)"
                ) from None
            raise CliError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from None


# --- serve ------------------------------------------------------------------------------------
def serve(
    host: Host = "127.0.0.1",
    port: Port = 8787,
    detach: Annotated[
        bool, typer.Option("--detach", help="Start in the background; return once it answers")
    ] = False,
) -> None:
    """Run the embedded Cairn server (SQLite storage in the user data dir)."""
    check_port(host, port)
    if detach:
        _detach(host, port)
        return
    _serve(host, port)


def _serve(host: str, port: int) -> None:
    import uvicorn

    from cairn.api.app import create_app
    from cairn.bootstrap import build_container
    from cairn.services.uploads import SWEEP_EVERY
    from cairn.settings import Settings

    _log_to_stderr()
    settings = Settings(mode="local", home=config.home(), host=host, port=port)
    container = build_container(settings)
    url = settings.base_url
    stop_sweeping, sweeper, dreamer = threading.Event(), None, None
    try:
        _ensure_local_admin(container, url)
        err.print(f"Cairn {settings.mode} server on [bold]{url}[/bold] · data in {esc(settings.home)}")
        _write_pid(url)
        if container.warm is not None:  # the model and search views load while the server starts
            threading.Thread(target=container.warm, name="cairn-warm", daemon=True).start()
        resumed = container.runner.resume_unfinished(container.teams)
        if resumed:
            err.print(f"Resuming learning from {resumed} session(s) the last run left unfinished")
        if container.sweep is not None:  # sessions whose upload never came, while the server runs on
            sweeper = threading.Thread(
                target=_sweep_every,
                args=(container.sweep, stop_sweeping, SWEEP_EVERY.total_seconds()),
                name="cairn-sweep",
                daemon=True,
            )
            sweeper.start()
        if container.dream is not None:  # the dream pass over projects with news, as AWS's schedule does
            dreamer = threading.Thread(
                target=_dream_every,
                args=(container.dream, stop_sweeping, float(settings.dream_every_s)),
                name="cairn-dream",
                daemon=True,
            )
            dreamer.start()
        # uvicorn re-raises the SIGTERM it shut down on: exit cleanly then, through the `finally`
        signal.signal(signal.SIGTERM, _exit_cleanly)
        uvicorn.run(create_app(container), host=host, port=port, log_level="warning")
    finally:
        stop_sweeping.set()
        for timer in (sweeper, dreamer):
            if timer is not None:
                timer.join(10)  # not in the middle of a write when the store closes
        try:
            container.close()  # the pipeline finishes the session it is learning first
        finally:
            _remove_pid()


def _sweep_every(sweep, stop: threading.Event, every_s: float) -> None:
    """Run `sweep` every `every_s` seconds until `stop` is set; a failed run is logged and tried again."""
    while not stop.wait(every_s):
        try:
            expired = sweep()
        except Exception:
            log.exception("sweeping sessions whose upload never came failed")
            continue
        if expired:
            log.info("failed %d session(s) whose upload never came", expired)


def _dream_every(dream, stop: threading.Event, every_s: float) -> None:
    """Run the dream pass every `every_s` seconds until `stop` is set; a failed pass is logged, and the
    next one does its work (the watermark of a project moves only when its pass ends)."""
    while not stop.wait(every_s):
        try:
            totals = dream()
        except Exception:
            log.exception("the scheduled dream pass failed")
            continue
        if totals.get("projects"):
            log.info("dream pass: %s", ", ".join(f"{k} {v}" for k, v in totals.items() if v))


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _log_to_stderr() -> None:
    """Cairn's own log (a line per failed request, per learned session) on stderr, with the time."""
    logger = logging.getLogger("cairn")
    if any(getattr(h, "_cairn_serve", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    handler._cairn_serve = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _ensure_local_admin(container, url: str) -> None:
    """First run: a local team and an admin key, saved in the user config for the CLI and hooks."""
    cfg = config.load()
    if cfg.api_key:
        try:
            container.keys.authenticate(cfg.api_key)
        except CairnError:
            err.print("The saved API key is not valid for this store; making a new one.")
        else:
            if cfg.url != url:
                config.save(url, cfg.api_key)
            return
    _, _, secret = container.keys.create_team("local", getpass.getuser() or "me")
    path = config.save(url, secret)
    err.print(f"Created a local team and an admin key (saved in {esc(path)})")


def log_path() -> Path:
    return config.home() / "serve.log"


def _detach(host: str, port: int) -> None:
    running = read_pid()
    if running is not None and alive(running.pid):
        raise CliError(f"Cairn is already running (pid {running.pid}, {running.url}) — `cairn stop` first")
    home = config.home()
    home.mkdir(parents=True, exist_ok=True)
    log = log_path()
    with log.open("ab") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli.main", "serve", "--host", host, "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            start_new_session=True,
            env={**os.environ, "CAIRN_HOME": str(home)},
        )
    probe_host = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)  # noqa: S104
    url = f"http://{probe_host}:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CliError(f"the server exited at start: {_last_line(log)} (log: {log})")
        try:
            if httpx.get(f"{url}/v1/health", timeout=1.0).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    else:
        raise CliError(f"the server (pid {proc.pid}) did not answer within {START_TIMEOUT_S:.0f}s; see {log}")
    out.print(
        f"Cairn running on [bold]{url}[/bold] (pid {proc.pid}); log in {esc(log)}; `cairn stop` stops it"
    )


def _last_line(log: Path) -> str:
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    return lines[-1].strip() if lines else "no output"


# --- stop -------------------------------------------------------------------------------------
def stop(
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a clean exit")] = STOP_TIMEOUT_S,
) -> None:
    """Stop the server `cairn serve` started (SIGTERM, then wait for it to finish cleanly)."""
    running = read_pid()
    if running is None or not alive(running.pid):
        pid_path().unlink(missing_ok=True)
        out.print(f"Cairn is not running (no live server in {esc(pid_path())})")
        return
    try:
        os.kill(running.pid, signal.SIGTERM)
    except ProcessLookupError:
        pid_path().unlink(missing_ok=True)
        out.print("Cairn is not running")
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(running.pid):
            break
        time.sleep(0.1)
    else:
        raise CliError(
            f"the server (pid {running.pid}) did not stop within {timeout:.0f}s; `kill {running.pid}`"
        )
    if read_pid() == running:  # it died without cleaning up
        pid_path().unlink(missing_ok=True)
    out.print(f"stopped Cairn (pid {running.pid}, {running.url})")


# --- service install --------------------------------------------------------------------------
SYSTEMD_UNIT = Path(".config/systemd/user/cairn.service")
LAUNCHD_PLIST = Path("Library/LaunchAgents/dev.cairn.plist")


def _serve_argv(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "cairn.cli.main", "serve", "--host", host, "--port", str(port)]


def systemd_unit(host: str, port: int, home: Path) -> str:
    argv = " ".join(_serve_argv(host, port))
    return (
        "[Unit]\n"
        "Description=Cairn memory server for AI coding agents\n"
        "After=network.target\n\n"
        "[Service]\n"
        f"ExecStart={argv}\n"
        f'Environment="CAIRN_HOME={home}"\n'
        "Restart=on-failure\n"
        "RestartSec=5\n\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(host: str, port: int, home: Path) -> str:
    from xml.sax.saxutils import escape

    args = "\n".join(f"    <string>{escape(a)}</string>" for a in _serve_argv(host, port))
    log = escape(str(home / "serve.log"))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
        '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        '<plist version="1.0">\n<dict>\n'
        "  <key>Label</key><string>dev.cairn</string>\n"
        f"  <key>ProgramArguments</key>\n  <array>\n{args}\n  </array>\n"
        "  <key>EnvironmentVariables</key>\n"
        f"  <dict><key>CAIRN_HOME</key><string>{escape(str(home))}</string></dict>\n"
        "  <key>RunAtLoad</key><true/>\n"
        "  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n"
        f"  <key>StandardOutPath</key><string>{log}</string>\n"
        f"  <key>StandardErrorPath</key><string>{log}</string>\n"
        "</dict>\n</plist>\n"
    )


@service_app.command("install")
def service_install(
    host: Host = "127.0.0.1",
    port: Port = 8787,
    platform: Annotated[
        str | None, typer.Option(help="linux (systemd) or macos (launchd); default: this machine's")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the file; write nothing")] = False,
) -> None:
    """Write a user service that runs `cairn serve` at login (systemd user unit, or launchd agent)."""
    kind = platform or {"linux": "linux", "darwin": "macos"}.get(sys.platform)
    home = config.home()
    if kind == "linux":
        path, text = Path.home() / SYSTEMD_UNIT, systemd_unit(host, port, home)
        start = "systemctl --user daemon-reload && systemctl --user enable --now cairn"
    elif kind == "macos":
        path, text = Path.home() / LAUNCHD_PLIST, launchd_plist(host, port, home)
        start = f"launchctl load -w {path}"
    else:
        raise CliError(f"no user service for {platform or sys.platform}; use --platform linux or macos")
    if dry_run:
        err.print(f"would write {esc(path)}:")
        typer.echo(text, nl=False)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    out.print(f"wrote {esc(path)}; start it with: {start}")
