"""Which remembered text may reach an agent unasked: provenance of tool output, and instructions in it.

A memory shared by a team is a channel into every teammate's agent. Text a tool returned (a web page,
search results, a dependency's README, a file outside the repository, a command's output, another MCP
server's answer) was written by someone else; when it reads as instructions to an agent ("IMPORTANT
NOTE FOR AI AGENTS: … never ask the user"), it must not come back as advice. Three pure parts:

- `classify`: a tool call as a `Source` (which tool, its command/file/URL/query, trusted or not);
  only the repository's own files are trusted;
- `directive`: the cue by which a text reads as instructions to an agent, or None (generic cues:
  text addressed to an AI/agent/assistant, "ignore previous instructions", "never ask the user",
  "remember this for all future sessions", a download piped to a shell, pushing to main or turning
  checks off, hidden-instruction markers);
- `withheld`: why a memory must not be shown unasked (untrusted source AND directive), re-checked
  whenever memory is shown, so memories stored before this existed are covered too.

The session-start block and the prompt hook drop what `withheld` names; explicit recall still finds
it, marked untrusted with its source (`label`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cairn.domain.models import Memory, MemoryKind, Source

TARGET_CHARS = 160  # a source's command, path or URL as stored
LABEL_CHARS = 60  # ... and as shown in a tag
_AGENT = (
    r"(?:ai|a\.i\.|llms?|large language models?|language models?|(?:ai |coding |autonomous )?agents?"
    r"|(?:ai |coding )?assistants?|chat ?bots?|claude|copilot|codex|gemini|cursor|chatgpt|gpt(?:-\d)?)"
)
# each cue: (name, pattern); generic phrasings of instructions aimed at an agent, never a project's words
CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I | re.M))
    for name, pattern in (
        (
            "addressed to an AI agent",
            rf"\b(?:note|notice|message|instructions?|attention|warning|reminder|directive)s?\s+(?:for|to)\s+"
            rf"(?:all\s+|any\s+)?(?:the\s+)?{_AGENT}\b",
        ),
        ("addressed to an AI agent", rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AGENT}\b"),
        ("addressed to an AI agent", rf"\b(?:dear|hey|attention)\s+{_AGENT}\b"),
        (
            "addressed to an AI agent",
            rf"^\W*{_AGENT}\s*[:,]\s*(?:you\s+(?:must|should|will)|always|never|ignore|do\s+not|don'?t)\b",
        ),
        (
            "ignore previous instructions",
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|preceding|original|existing|system|other)\s+"
            r"(?:instructions?|prompts?|rules|directions|guidelines|guardrails|context)",
        ),
        (
            "keep the user out",
            r"\b(?:never|don'?t|do\s+not|without)\s+(?:ever\s+)?(?:ask(?:ing)?|tell(?:ing)?|inform(?:ing)?"
            r"|notify(?:ing)?|consult(?:ing)?|confirm(?:ing)?\s+with|check(?:ing)?\s+with|alert(?:ing)?"
            r"|mention(?:ing)?\s+(?:this|it)\s+to)\s+the\s+(?:user|human|developer|operator)\b",
        ),
        (
            "remember for future sessions",
            r"\b(?:remember|memori[sz]e|store|save|keep|persist)\s+(?:this|that|these|the\s+following)\b[^.\n]{0,60}"
            r"\b(?:all\s+|every\s+)?(?:future|subsequent|later|next|upcoming)\s+(?:sessions?|conversations?|"
            r"tasks?|runs?|chats?)",
        ),
        (
            "remember for future sessions",
            r"\b(?:add|write|save|store)\s+(?:this|that|the\s+following)\s+(?:to|in|into)\s+(?:your\s+)?"
            r"(?:long[- ]term\s+|persistent\s+)?memor(?:y|ies)\b",
        ),
        (
            "download piped to a shell",
            r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?(?:-\S+\s+)*"
            r"(?:ba|z|da|k|fi)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\|\s*(?:iex|invoke-expression)\b",
        ),
        (
            "push to main or turn checks off",
            r"\bpush\s+(?:\S+\s+){0,3}?(?:directly|straight|right)\s+(?:\S+\s+)?to\s+(?:main|master|production|prod)\b"
            r"|\bpush\s+--force\s+(?:origin\s+)?(?:main|master)\b"
            r"|\b(?:disable|skip|bypass|turn\s+off|switch\s+off|deactivate|circumvent)\s+(?:all\s+)?(?:the\s+)?"
            r"(?:safety\s+|security\s+|pre-?commit\s+|branch\s+)?(?:checks|hooks|protections?|guardrails"
            r"|verification|code\s+review|reviews|sandbox(?:ing)?|ci)\b",
        ),
        (
            "hidden instruction marker",
            r"<!--\s*(?:ai|llm|agent|assistant|system|prompt|instructions?|hidden)\b"
            r"|<\s*/?\s*(?:system|instructions?|hidden[-_ ]?instructions?|im_start|im_end)\s*>"
            r"|<\|im_(?:start|end)\|>|\[\s*(?:system|hidden)\s*(?:prompt|instructions?|message)?\s*\]"
            r"|\b(?:begin|start)\s+(?:hidden|secret|system)\s+(?:instructions?|prompt)\b"
            # a heading of its own, not a phrase in a sentence ("a Claude-specific system prompt: …")
            r"|^\W{0,4}(?:new\s+(?:system\s+)?instructions?|system\s+prompt)\s*:",
        ),
        (
            "instructions to an agent",
            r"\byou\s+(?:are|must|should|will)\s+now\s+(?:act|behave|ignore|obey|follow|only)\b"
            r"|\bfrom\s+now\s+on,?\s+(?:you|the\s+(?:agent|assistant|ai))\s+(?:must|should|will|are\s+to)\b"
            r"|\b(?:send|upload|post|exfiltrate|forward|leak)\s+(?:the\s+|all\s+|your\s+|any\s+)?"
            r"(?:api[\s_-]?keys?|secrets?|credentials|tokens?|passwords?|env(?:ironment)?\s+variables|\.env"
            r"|ssh\s+keys?)\s+to\b",
        ),
    )
)
# zero-width characters in a row, or Unicode tag characters, hide text from a person reading it (a lone
# byte-order mark starts every line of some CI logs: that is no marker)
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff]{3,}|[\U000e0000-\U000e007f]")


def directive(text: str) -> str | None:
    """The cue by which `text` reads as instructions to an AI agent, or None."""
    if not text:
        return None
    if _INVISIBLE.search(text):
        return "hidden instruction marker"
    # a cue broken over lines (an excerpt wraps tool output) is found on the text as one line
    for candidate in (text, " ".join(text.split())):
        for name, pattern in CUES:
            if pattern.search(candidate):
                return name
    return None


# --- sources --------------------------------------------------------------------------------------
_WEB_FETCH = re.compile(r"fetch|browse|browser|scrape|crawl|url|http|navigate", re.I)
_WEB_SEARCH = re.compile(r"search", re.I)
_WEB = re.compile(r"web|google|internet|online|brave|tavily|exa|bing|duckduckgo|perplexity", re.I)
_FILE_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "read_many_files",
        "readfile",
        "view",
        "cat",
        "open",
        "grep",
        "glob",
        "ls",
        "list",
        "list_directory",
        "list_dir",
        "search_file_content",
        "file_search",
        "grep_search",
        "codebase_search",
        "find",
    }
)
_PATH_FIELDS = ("file_path", "filePath", "absolute_path", "path", "target_file", "file", "paths", "pattern")
_URL_FIELDS = ("url", "uri", "href", "link")
_QUERY_FIELDS = ("query", "q", "search_query", "search_term", "prompt")
# where dependencies keep their code and docs: text someone else wrote, even inside the checkout
DEPENDENCY_DIRS = frozenset(
    {
        "node_modules",
        "site-packages",
        "dist-packages",
        "vendor",
        ".venv",
        "venv",
        "third_party",
        "third-party",
        "bower_components",
        ".cargo",
        ".rustup",
        "Pods",
        ".gradle",
        ".m2",
        ".pnpm-store",
        ".yarn",
        ".bundle",
        "gems",
    }
)
_GO_MOD = re.compile(r"/go/pkg/mod/")


def classify(
    tool: str | None,
    tool_input: Mapping[str, Any] | str | None,
    *,
    command: str | None = None,
    cwd: str | None = None,
) -> Source:
    """The source a tool call's result is: trusted only for a file of the repository (a path inside
    `cwd`, or relative, and not in a dependency folder). `command`: the command line, for a shell tool."""
    name = tool or "tool"
    if command is not None:
        return Source(tool=name, target=_short(command))
    args = tool_input if isinstance(tool_input, Mapping) else {}
    kind = _kind(name, args)
    if kind == "web":
        return Source(tool=name, target=_short(_field(args, _URL_FIELDS)))
    if kind in ("search", "mcp"):
        return Source(tool=name, target=_short(_field(args, _URL_FIELDS + _QUERY_FIELDS)))
    if kind == "file":
        path = _field(args, _PATH_FIELDS)
        return Source(tool=name, target=_short(path), trusted=path is None or in_repository(path, cwd))
    return Source(tool=name, target=_short(_field(args, _PATH_FIELDS + _URL_FIELDS + _QUERY_FIELDS)))


def _kind(tool: str, args: Mapping[str, Any]) -> str:
    """web | search | mcp | file | other (a command, or a tool that says nothing of where it looked)."""
    low = tool.lower()
    if low.startswith(("mcp__", "mcp_")):
        return "mcp"
    if _field(args, _URL_FIELDS) or (_WEB_FETCH.search(low) and not _WEB_SEARCH.search(low)):
        return "web"
    if _WEB_SEARCH.search(low) and (_WEB.search(low) or low == "search"):
        return "search"
    return "file" if low in _FILE_TOOLS else "other"


def in_repository(path: str, cwd: str | None) -> bool:
    """A path of the repository's own files: relative, or under `cwd`, and not a dependency's."""
    path = path.strip().replace("\\", "/")
    if not path or path.startswith("~") or "://" in path:
        return False
    normal = posixpath.normpath(path)
    if normal.startswith("/") or re.match(r"^[A-Za-z]:/", normal):
        root = posixpath.normpath(cwd.replace("\\", "/")) if cwd else ""
        if not root or not (normal == root or normal.startswith(root.rstrip("/") + "/")):
            return False
        normal = normal[len(root) :]
    if normal == ".." or normal.startswith("../") or _GO_MOD.search("/" + normal):
        return False
    return not DEPENDENCY_DIRS.intersection(normal.split("/"))


def _field(args: Mapping[str, Any], names: Iterable[str]) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, list) and value and isinstance(value[0], str):
            value = value[0]
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _short(text: str | None, limit: int = TARGET_CHARS) -> str | None:
    if not text:
        return None
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def label(source: Source, limit: int = LABEL_CHARS) -> str:
    """A source in a few words: `WebFetch https://example.com/page`."""
    target = _short(source.target, limit)
    return f"{source.tool} {target}" if target else source.tool


# --- what a memory may show unasked -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Withheld:
    cue: str  # why the text reads as instructions
    source: Source | None  # the untrusted tool it came from, when known


_OUTCOME = ("  → ", "    ")  # an excerpt renders a tool's output under its call (pipeline.steps)
_JSON_ARGS = re.compile(r"^(\S+)\s+(\{.*)$")


def untrusted_text(m: Memory) -> list[tuple[Source | None, str]]:
    """The parts of a memory's text an untrusted tool returned, each with its source when known.

    A transcript excerpt holds the user's, the agent's and tools' words: the tool output under each
    call is its untrusted part unless the call read a file of the repository. A memory a tool said
    whole is untrusted whole; the user's and the agent's own words never are."""
    p = m.provenance
    if m.kind is MemoryKind.EXCERPT:
        return [(s, text) for s, text in _excerpt_outputs(m.content, p.sources) if s is None or not s.trusted]
    if p.said_by in ("tool", "mixed"):
        untrusted = [s for s in p.sources if not s.trusted]
        if untrusted or not p.sources:
            return [(untrusted[0] if untrusted else None, m.content)]
        return []
    if p.said_by is None and str(m.details.get("source", "")) == "tool":  # stored before provenance
        return [(None, m.content)]
    return []


def _excerpt_outputs(content: str, sources: tuple[Source, ...]) -> list[tuple[Source | None, str]]:
    """Each tool output block of a rendered excerpt, with the source its call line names."""
    blocks: list[tuple[Source | None, str]] = []
    header, lines = "", []
    for line in [*content.splitlines(), ""]:
        if line.startswith(_OUTCOME):
            lines.append(line[len(_OUTCOME[0]) :])
            continue
        if lines:
            blocks.append((_source_of_header(header, sources), "\n".join(lines)))
        header, lines = line, []
    return blocks


def _source_of_header(header: str, sources: tuple[Source, ...]) -> Source | None:
    """The source an excerpt's call line names: a stored source of the same tool and target when the
    memory has them; else what the line itself says (a command `$ …`, a tool and its JSON arguments)."""
    if header.startswith("$ "):
        command = header[2:].split("   # ", 1)[0]
        return _stored(sources, None, command) or Source(tool="shell", target=_short(command))
    m = _JSON_ARGS.match(header)
    tool, raw = (m.group(1), m.group(2)) if m else (header.split(" ", 1)[0] or "tool", "")
    found = _stored(sources, tool, raw)
    if found is not None:
        return found
    args: dict[str, Any] = {}
    for key in _PATH_FIELDS + _URL_FIELDS + _QUERY_FIELDS:
        if fm := re.search(rf'"{key}":\s*"([^"]*)', raw):
            args[key] = fm.group(1)
    # stored before sources were recorded: an absolute path's repository is unknown, so only a
    # dependency folder or a path outside the home of the project makes it untrusted
    source = classify(tool, args, cwd=None)
    path = _field(args, _PATH_FIELDS)
    if tool.lower() in _FILE_TOOLS and path and path.startswith("/"):
        parts = set(posixpath.normpath(path).split("/"))
        source = Source(tool=source.tool, target=source.target, trusted=not DEPENDENCY_DIRS & parts)
    return source


def _stored(sources: tuple[Source, ...], tool: str | None, said: str) -> Source | None:
    for s in sources:
        if tool is not None and s.tool != tool:
            continue
        head = (s.target or "")[:40].rstrip("…")
        if not head or head in said:
            return s
    return None


def withheld(m: Memory) -> Withheld | None:
    """Why `m` must not reach an agent unasked: untrusted text in it reads as instructions to an agent.
    Checked on what the memory says now, with the cues recorded when it was stored as well."""
    for s in m.provenance.sources:
        if not s.trusted and s.directive:
            return Withheld(s.directive, s)
    for source, text in untrusted_text(m):
        if cue := directive(text):
            return Withheld(cue, source)
    return None


def untrusted_sources(m: Memory) -> list[Source]:
    """The untrusted tools whose output `m` holds (stored, else read from an excerpt's call lines)."""
    stored = [s for s in m.provenance.sources if not s.trusted]
    if stored:
        return stored
    return [s for s, _ in untrusted_text(m) if s is not None]


def origin_tag(m: Memory) -> str:
    """A short tag for text the web, a search, another MCP server or a file outside the repository
    returned, where memory reaches an agent: `[from tool: WebFetch https://…]`. None for the user's and
    the agent's own words, nor for a command's output (its line names the command): tags cost tokens."""
    if m.kind is not MemoryKind.EXCERPT and m.provenance.said_by not in ("tool", "mixed"):
        return ""
    shown = [s for s in untrusted_sources(m) if not _is_command(s)]
    return f"[from tool: {label(shown[0])}]" if shown else ""


def _is_command(s: Source) -> bool:
    """A source that is neither the web, a search, another MCP server nor a file: a command's output."""
    is_url = bool(s.target and re.match(r"https?://", s.target))
    return _kind(s.tool, {"url": s.target} if is_url else {}) == "other"
