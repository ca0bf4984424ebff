"""The real-agent tier: pinned agent CLIs from npm, run headless against a fake model server and a real Cairn.

Every agent runs in a scratch HOME (its settings, sessions and Cairn's wiring all live there; the real user's
~/.claude, ~/.codex ... are never read or written), in a scratch git project, against:

- `cairn serve` as a subprocess on a free 127.0.0.1 port with a scratch CAIRN_HOME (it writes the config the
  hooks read, exactly as on a user's machine), wired in with `cairn install-hooks` / `cairn install-mcp`;
- `tests.fakes.models.FakeModelServer`, which records every request the CLI makes to its model.

The CLIs are installed with npm into `~/.cache/cairn-agents/<package>@<version>` (CAIRN_AGENTS_CACHE moves it)
and reused from there. Tests skip, saying why, only when a CLI is not cached and the npm registry cannot be
reached; any other install failure fails them. Nothing but 127.0.0.1 is reached while the agents run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.fakes.models import FakeModelServer, ToolCall

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
CACHE = Path(os.environ.get("CAIRN_AGENTS_CACHE") or Path.home() / ".cache" / "cairn-agents")

# agent -> (npm package, pinned version, executable)
PINNED = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("@openai/codex", "0.169.0", "codex"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
    "copilot-cli": ("@github/copilot", "1.0.102", "copilot"),
}
PROJECT_REMOTE = "https://github.com/acme/agents-demo.git"
PROJECT = "github.com/acme/agents-demo"

# what the first session's prompt says (the rules extractor learns both sentences) ...
PREFERENCE = "Please always use pnpm instead of npm in this repository."
DECISION = "We decided to go with PostgreSQL 16 for the orders service."
# ... and, in the same prompt, a question one seeded memory answers (a prompt of several parts)
QUESTION = "What port does the payments stub use?"
FIRST_PROMPT = f"{PREFERENCE} {DECISION} {QUESTION}"
LEARNED = "PostgreSQL 16"  # what the second session's prompt hook and recall must bring back
# ... what Cairn knows before it (seeded), and the second session's prompt
SEEDED_FACT = "Staging deploys go through the blue-green router called heron-gateway."
SEEDED_ANSWER = "The payments stub listens on port 4010; `make stub` starts it."
ANSWER = "port 4010"
SECOND_PROMPT = "Set up the orders service database the way we agreed."
LEARN_TIMEOUT_S = 45
RECALL = ToolCall("recall", {"query": "orders service database"}, must_contain="cairn")
# the headers Cairn's two context hooks put on what they add
SESSION_START_HEADER = f"# Cairn memory for {PROJECT}"
PROMPT_HEADER = "Cairn memories that may bear on this prompt"


# --- the CLIs from npm ----------------------------------------------------------------------------
def _registry_reachable() -> bool:
    try:
        subprocess.run(
            ["npm", "ping", "--loglevel=error"], capture_output=True, timeout=20, check=True, env=_npm_env()
        )
        return True
    except (OSError, subprocess.SubprocessError):
        return False


def _npm_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false")
    return env


def install_agent(agent: str) -> Path:
    """The pinned CLI, installed into the cache on first use (an atomic rename: never half an install)."""
    package, version, exe = PINNED[agent]
    folder = CACHE / f"{package.replace('/', '+')}@{version}"
    binary = folder / "node_modules" / ".bin" / exe
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed; the agents tier needs Node.js and npm")
    if not _registry_reachable():
        pytest.skip(f"{package}@{version} is not cached in {CACHE} and the npm registry is unreachable")
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    proc = subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(tmp),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=_npm_env(),
        check=False,
    )
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"npm install {package}@{version} failed:\n{proc.stderr[-2000:]}")
    try:
        tmp.rename(folder)
    except OSError:  # another run finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return binary


# --- a scratch world: HOME, project, Cairn, the fake model ------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: a proxy that refuses whatever an agent tries to reach."""
    return f"http://127.0.0.1:{_free_port()}"


@dataclass
class World:
    agent: str
    root: Path
    home: Path
    project: Path
    cairn_home: Path
    binary: Path
    models: FakeModelServer
    url: str = ""
    key: str = ""
    env: dict[str, str] = field(default_factory=dict)
    server: subprocess.Popen | None = None
    installed: list[Path] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    # --- running things -------------------------------------------------------------------------
    def run(self, *args: str | Path, timeout: float = 180, cwd: Path | None = None, env=None, stdin=None):
        started = time.monotonic()
        proc = subprocess.run(
            [str(a) for a in args],
            cwd=cwd or self.project,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            check=False,
        )
        self.logs.append(
            f"$ {' '.join(map(str, args))}  ({time.monotonic() - started:.1f}s, rc={proc.returncode})\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        return proc

    def cairn(self, *args: str | Path, timeout: float = 120):
        return self.run(sys.executable, "-m", "cairn.cli.main", *args, timeout=timeout)

    def install(self) -> list[str]:
        """`cairn install-hooks` and `cairn install-mcp` for this agent; the files they report."""
        lines: list[str] = []
        for args in (("install-hooks", "--agent", self.agent), ("install-mcp", "--client", self.agent)):
            proc = self.cairn(*args)
            assert proc.returncode == 0, proc.stderr
            lines += proc.stdout.splitlines()
        return lines

    # --- Cairn's REST API -----------------------------------------------------------------------
    def api(self, method: str, path: str, **kwargs):
        headers = {"Authorization": f"Bearer {self.key}"}
        resp = httpx.request(method, self.url + path, headers=headers, timeout=30, **kwargs)
        resp.raise_for_status()
        return resp.json()

    def remember(self, content: str, kind: str = "fact") -> str:
        return self.api("POST", "/v1/memories", json={"content": content, "kind": kind, "project": PROJECT})[
            "id"
        ]

    def sessions(self) -> list[dict]:
        return self.api("GET", "/v1/sessions", params={"project": PROJECT})["items"]

    def wait_learned(self, count: int, timeout: float) -> list[dict]:
        """This agent's sessions once `count` are learned (or failed), or when `timeout` has passed."""
        deadline = time.monotonic() + timeout
        mine: list[dict] = []
        while time.monotonic() < deadline:
            mine = [s for s in self.sessions() if s.get("agent") == self.agent]
            if len([s for s in mine if s.get("status") in ("learned", "failed")]) >= count:
                return mine
            if not mine and time.monotonic() > deadline - timeout + 10 and not self.captured():
                break  # no capture hook has run at all: nothing is coming
            time.sleep(0.5)
        self.logs.append(f"{count} {self.agent} session(s) not learned in {timeout}s: {mine}")
        return mine

    def memories(self, kind: str) -> list[str]:
        items = self.api("GET", "/v1/memories", params={"project": PROJECT, "kind": kind, "limit": 100})[
            "items"
        ]
        return [m["content"] for m in items]

    def captured(self) -> bool:
        return (self.cairn_home / "capture").exists()

    def capture_log(self) -> str:
        log = self.cairn_home / "capture" / "worker.log"
        return log.read_text() if log.exists() else "(no capture log)"

    def diagnostics(self) -> str:
        return "\n\n".join(self.logs[-8:]) + "\n\ncapture log:\n" + self.capture_log()

    def snapshot(self, paths: list[Path]) -> dict[Path, bytes | None]:
        return {p: (p.read_bytes() if p.exists() else None) for p in paths}


def make_world(agent: str, root: Path, models: FakeModelServer) -> World:
    binary = install_agent(agent)
    home, project, cairn_home = root / "home", root / "project", root / "cairn"
    for d in (home, project, cairn_home):
        d.mkdir(parents=True)
    world = World(agent, root, home, project, cairn_home, binary, models)
    world.env = {
        "PATH": os.pathsep.join(
            [str(binary.parent), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        ),
        "HOME": str(home),
        "USER": os.environ.get("USER", "tester"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(root / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "CAIRN_HOME": str(cairn_home),
        "PYTHONPATH": str(REPO / "layers" / "core"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    (root / "tmp").mkdir()
    for args in (
        ("git", "init", "-q", "-b", "main"),
        ("git", "remote", "add", "origin", PROJECT_REMOTE),
        (
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ),
    ):
        assert world.run(*args).returncode == 0
    return world


def start_cairn(world: World) -> None:
    port = _free_port()
    log = (world.root / "cairn-serve.log").open("w")
    world.server = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", "serve", "--port", str(port)],
        cwd=world.root,
        env=world.env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    world.url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    config = world.cairn_home / "config.toml"
    while time.monotonic() < deadline:
        assert world.server.poll() is None, (world.root / "cairn-serve.log").read_text()
        try:
            if httpx.get(world.url + "/v1/health", timeout=1).status_code == 200 and config.exists():
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    else:
        pytest.fail("cairn serve did not answer in 60 s")
    world.key = tomllib.loads(config.read_text())["server"]["api_key"]


def warm_up(world: World) -> None:
    """One recall before the agents start, so the embedding model is loaded.

    The context hooks fail open after 3 s, and on a cold 2-core machine the server's first recall (which
    loads the model) can take longer: a user's long-running server is warm, and so is ours.
    """
    started = time.monotonic()
    world.api("GET", "/v1/context/prompt", params={"project": PROJECT, "prompt": "payments stub"})
    world.logs.append(f"warm-up recall: {time.monotonic() - started:.1f}s")


def stop_cairn(world: World) -> None:
    if world.server and world.server.poll() is None:
        world.server.terminate()
        try:
            world.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            world.server.kill()


@dataclass(frozen=True)
class AgentSpec:
    """How one agent module drives its CLI; the shared behaviours (tests/agents/behaviours.py) do the rest."""

    agent: str
    configure: Callable[[World], None]  # point the CLI at the fake model (its own config files and env)
    run_session: Callable[[World, str], subprocess.CompletedProcess]  # one headless session
    list_mcp: Callable[[World], subprocess.CompletedProcess]  # the CLI's own MCP listing
    mcp_listed: Callable[[str], bool]  # the listing shows Cairn's server connected (or enabled)
    recall_tool: str  # the name the CLI gives Cairn's recall tool, as the model sees it


@dataclass
class Sessions:
    """What one agent's module-wide scenario left behind, for its tests to examine."""

    spec: AgentSpec
    world: World
    first: list = field(default_factory=list)  # requests to the model in session 1
    second: list = field(default_factory=list)  # ... and in session 2
    runs: list = field(default_factory=list)  # the two sessions' processes
    install_report: list[str] = field(default_factory=list)
    reinstall_report: list[str] = field(default_factory=list)
    before_reinstall: dict = field(default_factory=dict)
    after_reinstall: dict = field(default_factory=dict)
    mcp_list: subprocess.CompletedProcess | None = None
    learned: list[dict] = field(default_factory=list)  # this agent's sessions in Cairn after session 1
    seconds: dict[str, float] = field(default_factory=dict)


def scenario(spec: AgentSpec, root: Path) -> Sessions:
    """The story every agent tells: wire Cairn in (twice), two sessions, the second remembers the first.

    Nothing here stops at a missing piece: each test checks its own part of the story, so one agent's
    gap (say, hooks its CLI will not run) shows as the tests that depend on it, with the others still run.
    """
    models = FakeModelServer()
    models.__enter__()
    world = make_world(spec.agent, root, models)
    out = Sessions(spec, world)
    try:
        start_cairn(world)
        world.remember(SEEDED_FACT)
        world.remember(SEEDED_ANSWER)
        warm_up(world)
        spec.configure(world)
        out.install_report = world.install()
        words = [line.split() for line in out.install_report]
        paths = sorted({Path(w[1]) for w in words if w and w[0] in ("created", "updated", "unchanged")})
        out.before_reinstall = world.snapshot(paths)
        out.reinstall_report = world.install()
        out.after_reinstall = world.snapshot(paths)

        for prompt, name in ((FIRST_PROMPT, "first"), (SECOND_PROMPT, "second")):
            if name == "second":
                out.learned = world.wait_learned(1, timeout=LEARN_TIMEOUT_S)
                models.script.append(RECALL)  # the second session's model calls Cairn's recall once
            mark = len(models.requests)
            started = time.monotonic()
            out.runs.append(spec.run_session(world, prompt))
            out.seconds[name] = time.monotonic() - started
            setattr(out, name, [r for r in models.requests[mark:] if r.provider])
        out.mcp_list = spec.list_mcp(world)
    except BaseException:
        print(world.diagnostics())
        teardown(out)
        raise
    finally:
        dump(root / "requests.json", [r.__dict__ | {"reply": str(r.reply)} for r in models.requests])
    return out


def teardown(out: Sessions) -> None:
    stop_cairn(out.world)
    out.world.models.__exit__(None, None, None)


@pytest.fixture(scope="module")
def story(request, tmp_path_factory):
    """The module's agent (its `SPEC`) through the whole scenario, once per module."""
    spec: AgentSpec = request.module.SPEC
    out = scenario(spec, tmp_path_factory.mktemp(spec.agent))
    yield out
    teardown(out)


def pytest_collection_modifyitems(config, items):
    """A module's `XFAIL = {test name: reason}` marks those shared tests strict xfail for that agent only."""
    for item in items:
        if not Path(str(item.fspath)).is_relative_to(HERE):
            continue  # a conftest's collection hook sees the whole session's items
        reason = getattr(item.module, "XFAIL", {}).get(getattr(item, "originalname", item.name))
        if reason:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def text_of(requests) -> str:
    return "\n".join(r.text for r in requests)


def prompt_blocks(requests) -> list[str]:
    """What the prompt hook added, as the model saw it: from its header to the end of its block."""
    blocks = []
    for r in requests:
        start = r.text.find(PROMPT_HEADER)
        if start >= 0:
            end = r.text.find("cairn-context", start)
            blocks.append(r.text[start : end if end > 0 else None])
    return blocks


def dump(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
