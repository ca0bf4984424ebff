"""What a command is, read from its own line: the steps it ran, its words, and three questions
asked of it, in one place:

- is it a probe (`is_probe`): a read-only look around (`ls x`, `git status`,
  `--help`), whose failure found nothing rather than broke something;
- what kind of step is it (`categorise`): scaffold, install, build, test, typecheck, run or deploy,
  known by the tools every stack runs (pytest, cargo test, npm run build ...): what procedures are
  made of;
- what does it check (`purpose_of`): format, lint, type-check, test, check or build, read from the
  command's words and the agent's own description of it, for projects whose checks are their own
  scripts (`./ci.sh`, `mise run lint`): what a project's checks are.

The step kind and the check purpose answer different questions and keep their own rules (merging them
would change what is learned); they live here together, beside the probe test both use, so every rule
of "what is this command" is in this one module.
"""

from __future__ import annotations

import re
import shlex

MAX_COMMAND_CHARS = 300


_CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "scaffold",
            r"\b(create-next-app|create-react-app|create-vite|npm create|npm init|pnpm create|yarn create"
            r"|cargo new|cargo init|rails new|django-admin startproject|uv init|poetry new)\b",
        ),
        (
            "test",
            r"\b(pytest|tox|nox|jest|vitest|mocha|rspec|phpunit|go test|cargo test|ctest|npm (?:run )?test"
            r"|pnpm (?:run )?test|yarn test|bun test|make test|mvn test|gradlew? test"
            r"|python3? -m (?:pytest|unittest)"
            r"|dotnet test)\b",
        ),
        (
            "typecheck",
            r"\b(tsc|mypy|pyright|ruff|eslint|flake8|pylint|clippy|golangci-lint|npm run lint"
            r"|pnpm (?:run )?lint|yarn lint|cargo check)\b",
        ),
        (
            "build",
            r"\b(npm run build|pnpm (?:run )?build|yarn build|next build|vite build|webpack|cargo build"
            r"|go build|mvn (?:package|install)|gradlew? build|python3? -m build|docker build|cdk synth"
            r"|make)\b",
        ),
        (
            "run",
            r"\b(npm run dev|npm start|pnpm (?:run )?dev|pnpm start|yarn dev|yarn start|next dev|uvicorn"
            r"|gunicorn|flask run|manage\.py runserver|cargo run|go run|docker compose up|docker-compose up"
            r"|rails s(?:erver)?)\b",
        ),
        (
            "deploy",
            r"\b(alembic upgrade|prisma migrate|manage\.py migrate|cdk deploy|terraform apply"
            r"|kubectl apply|serverless deploy|sam deploy)\b",
        ),
        (
            "install",
            r"\b(npm (?:install|i|ci)|pnpm (?:add|install|i)|yarn add|yarn install|pip3? install"
            r"|uv (?:add|sync|pip install)|poetry (?:add|install)|cargo add|go get|bundle install)\b",
        ),
    )
)


# steps that run, build or verify something: what "a command that worked" means
VERIFYING = frozenset({"test", "typecheck", "build", "run", "deploy"})


def categorise(command: str) -> str | None:
    for name, pattern in _CATEGORIES:
        if pattern.search(command):
            return name
    return None


def command_key(command: str) -> str:
    """Two runs of "the same command" compare equal: whitespace folded."""
    return " ".join(command.split())


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STEP_SPLIT = re.compile(r"\s*(?:&&|;|\|\||\n)\s*")


# read-only probes: their failing says "not there", it is no error a fix follows (POSIX utilities and
# git's read-only subcommands, which every stack's sessions use to look around)
_PROBES = _words(
    """ls cat head tail grep egrep rg ag find fd sed awk wc which type command echo printf pwd stat file
    tree nl less more test [ true false sleep date env printenv whoami uname du df ps readlink realpath
    basename dirname cut sort uniq xargs jq diff cmp"""
)


_GIT_PROBES = _words(
    """status log diff show branch rev-parse ls-files ls-remote remote describe blame config rev-list
    merge-base cat-file for-each-ref show-ref tag reflog grep"""
)


_ASKS_ABOUT = frozenset({"--help", "-h", "--version", "-V", "help", "version"})


_READ_VERBS = _words(
    "status list ls show view info get describe inspect log logs whoami where which search ps history"
)


# searches: exit status 1 is their "no line matched", 2 and up an error (grep, ripgrep, ag, ack, git grep)
_SEARCHES = _words("grep egrep fgrep zgrep rg ag ack findstr pgrep")
_LAST_STAGE = re.compile(r"\s*(?:\|\|?|&&|;|\n)\s*")
_QUOTES = "'\"` )"


def ends_in_search(command: str) -> bool:
    """Whether what a line ran last is a search (`journalctl -u x | grep y`, `ssh host 'tail f | grep z'`,
    `a || grep b`): its exit status is the search's, and status 1 says only that nothing matched."""
    stages = [s for s in _LAST_STAGE.split(command.strip().rstrip(_QUOTES)) if s.strip()]
    words = stages[-1].strip().lstrip(_QUOTES).split() if stages else []
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in ("sudo", "command")):
        words = words[1:]
    if not words:
        return False
    head = words[0].rsplit("/", 1)[-1]
    return head in _SEARCHES or (head == "git" and len(words) > 1 and words[1] == "grep")


def step_keys(command: str) -> list[str]:
    """The keys of the commands a line chains (`a && b; c`): `mise trust && mise run fmt` runs
    `mise run fmt` as much as the line `mise run fmt` does."""
    return [command_key(s) for s in _STEP_SPLIT.split(command) if s.strip()]


REDIRECTS = re.compile(r"\s*\d?>&\d|\s*\d?>\s*/dev/null")  # how output was shown, not what ran


_CD = re.compile(r"^\s*cd(?:\s|$)")


def core_steps(command: str) -> list[str]:
    """What a line ran, step by step, without how its output was shown (`2>&1`, `| tail -5`) and
    without moving around (`cd web`): `cd web && bun run test 2>&1 | tail -3` ran `bun run test`."""
    out = []
    for step in _STEP_SPLIT.split(command):
        core = command_key(REDIRECTS.sub("", step.split(" | ")[0]))
        if core and not _CD.match(core):
            out.append(core)
    return out


def argv(command: str) -> list[str]:
    """The line's words as the shell splits them, how its output was shown and its `cd`s left out."""
    line = " && ".join(core_steps(command))
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def is_probe(command: str) -> bool:
    """A read-only look around (`ls x`, `grep -r y`, `git rev-parse --verify z`), judged by its first
    step (`cd` aside): a probe that fails found nothing, which is no error a later success fixes."""
    steps = core_steps(command)
    words = steps[0].split() if steps else []
    while words and "=" in words[0] and not words[0].startswith("-"):  # `FOO=1 cmd`
        words = words[1:]
    if not words:
        return True
    head = words[0].rsplit("/", 1)[-1]
    if head == "git":
        return _is_git_probe(words[1:])
    if head in _REMOTE_SHELLS:
        remote = remote_command(command)
        return remote is not None and is_probe(remote)
    if head in _PROBES or _ASKS_ABOUT.intersection(words[1:]):
        return True
    return _reads(words[1:4])


_REMOTE_SHELLS = frozenset({"ssh"})
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOopQRSWw")  # ssh's switches that take a value (`-p 2222`, `-o X=y`)


def remote_command(command: str) -> str | None:
    """What `ssh [switches] host "cmd"` runs on the other machine (`ssh deploy@web "ls /srv"` looks at
    `/srv` there), or None for a line that is no such call or opens a shell there."""
    try:
        words = shlex.split(command.strip())
    except ValueError:
        return None
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in ("timeout", "sudo")):
        words = words[2:] if words[0] == "timeout" and words[1:2] and words[1][:1].isdigit() else words[1:]
    if not words or words[0].rsplit("/", 1)[-1] not in _REMOTE_SHELLS:
        return None
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        switch = rest.pop(0)
        if len(switch) == 2 and switch[1] in _SSH_VALUED and rest:
            rest.pop(0)
    return " ".join(rest[1:]) or None if rest else None


def _reads(args: list[str]) -> bool:
    """`gh pr view 12`, `kubectl get pods`, `npm ls`, `tmux list-windows`: a read-only verb among the
    first names given, or leading the subcommand's compound name (not a later name: `npm install
    list-it` installs)."""
    named = [w for w in args if not w.startswith("-")][:2]
    return bool(_READ_VERBS.intersection([*named, *(w.split("-", 1)[0] for w in named[:1])]))


def _is_git_probe(args: list[str]) -> bool:
    named = [w for w in args if not w.startswith("-")]
    if named and named[0] not in _GIT_PROBES:
        return _reads(args[:3])  # `git worktree list`, `git stash show`
    if not named:
        return False
    if named[0] in ("remote", "config", "branch", "tag"):  # these also change things when given names
        return len(named) == 1 or bool(
            {"--get", "--get-all", "--get-regexp", "--list", "-l", "-v"} & set(args)
        )
    return True


def is_learnable_command(command: str) -> bool:
    """Short, single-line commands only: heredocs and scripts are one-offs, not procedures."""
    return len(command) <= MAX_COMMAND_CHARS and "\n" not in command and "<<" not in command


# what a verification step is for, from the words of its command or its description
_PURPOSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("format", re.compile(r"(?:^|[^a-z])(?:fmt|format\w*)(?:$|[^a-z])")),
    ("lint", re.compile(r"lint")),
    ("type-check", re.compile(r"type[- ]?check|(?:^|\s)tsc(?:\s|$)")),
    ("test", re.compile(r"test|(?:^|[^a-z])spec(?:$|[^a-z])")),
    ("check", re.compile(r"(?:^|[^a-z])check(?:$|[^a-z])")),
    ("build", re.compile(r"(?:^|[^a-z])(?:build|compile)(?:$|[^a-z])")),
)
# git and its forge CLI act on the repository (commit, push, pr create), never check the project; the
# look-arounds (`ls`, `cat`, `test -f`, `--help`) are `is_probe`'s
_NOT_A_CHECK = re.compile(r"^(?:git|gh)\b")
_PATH_LIKE = re.compile(r"/|\.\w{1,5}$")


def purpose_of(command: str, description: str = "") -> str | None:
    """What a verification command is for, or None when it is not one (exploration, git, help)."""
    command = command.strip()
    if not command or _NOT_A_CHECK.search(command) or is_probe(command):
        return None  # a look around (`printenv`, `entire status`) checks nothing of the project
    words = " ".join(_named_words(command))
    for name, pattern in _PURPOSES:
        if pattern.search(words.lower()):
            return name
    # the agent's description names the purpose of an opaque command (`./ci.sh`: "Run the test
    # suite"); its verb "check" means "look at" there, not the project's checks
    for name, pattern in _PURPOSES:
        if name != "check" and pattern.search(description.lower()):
            return name
    return None


def _named_words(command: str) -> list[str]:
    """The words that say what a command does: not its environment (`SESSION=test cmd`), not a
    quoted script or payload (`sh -c '…'`, `'{"id": "test"}'`), not a path (`nl test/app.ts`), and
    not its flags: they say how it runs (`mix dialyzer --format short` checks types, it formats nothing)."""
    tokens = argv(command)
    while tokens and _ASSIGNMENT.match(tokens[0]):
        tokens = tokens[1:]
    return [
        t
        for t in tokens
        if not _PATH_LIKE.search(t) and " " not in t and not _ASSIGNMENT.match(t) and not t.startswith("-")
    ]


_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
