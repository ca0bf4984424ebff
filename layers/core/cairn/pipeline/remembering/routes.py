"""Where a statement says the requests for a path are sent: the route reading of `subjects.changed`.

A web project's routing is stated, restated and changed over its life ("`/api/mcp/*` → port 3333", weeks
later "All `/api/` requests go to the map server"), in every stack: a reverse proxy's locations, a
router's scopes, a gateway's mappings. A route statement names a request path (a word that starts with
`/`: `/api/`, `/api/mcp/*`, `/mcp*`) and, after an arrow (`→`, `->`, `=>`) or a verb ("go to", "is
routed / proxied / forwarded / sent to", "is served / handled by", "route X to"), where it goes. The
destination is its port when it names one, else its distinguishing words ("the map server's own API" is
{map}). A later statement reroutes an earlier one when it sends the same path elsewhere, or says *all*
requests under a path go elsewhere and the earlier path is beneath it. Only the shape of the sentence is
read: nothing here knows a proxy, a framework or a project.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# a request path, backquoted or not (the rules below read none inside a URL or a name: `http://h/api`, `a/b`)
_PATH = r"`?(?P<path>/[\w.{}:*-]*(?:/[\w.{}:*-]*)*)`?"
_SENT = (
    r"(?:→|->|=>"
    r"|\b(?:go(?:es)?|(?:is|are)\s+(?:now\s+)?(?:routed|proxied|forwarded|sent|passed))\s+(?:directly\s+)?to\b"
    r"|\b(?:is|are)\s+(?:now\s+)?(?:served|handled)\s+by\b)"
)
# "`/api/` requests go to X", "`/mcp*` → port 3333": the path, up to three words, where it goes
_PATH_FIRST = re.compile(
    rf"(?<![\w./:~-]){_PATH}(?:\s+[A-Za-z]+){{0,3}}?\s*{_SENT}\s*(?P<dest>[^;\n]+)", re.I
)
# "route / proxy / send all `/api/` requests to X"; the verb, not the noun: "added a route at `/x` to
# serve it" routes nothing
_VERB_FIRST = re.compile(
    rf"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bnew )\b(?:route|proxy|forward|send)(?:s|ed|ing)?\s+"
    rf"(?P<all>all\s+|every\s+)?(?:(?!at\b)[A-Za-z]+\s+){{0,2}}?"
    rf"(?<![\w./:~-]){_PATH}(?:\s+[A-Za-z]+)?\s+to\s+(?P<dest>[^;\n]+)",
    re.I,
)
_ALL_BEFORE = re.compile(r"\b(?:all|every|any)\s+(?:[A-Za-z]+\s+)?$", re.I)
_CLAUSE = re.compile(r";\s+|\n+|(?<=[.!?])\s+(?=[A-Z`])")
# where a destination stops: what follows says what it is not, or goes on to another thing
_DEST_END = re.compile(r",\s*(?:not|but|and|so|which)\b|\s(?:not|instead of|rather than|except)\b|\.\s|\.$")
# "it's not proxying `/api/` requests to X"
_DENIED = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:[A-Za-z]+\s+)?$", re.I)
_SENDS = re.compile(r"^\W*(?:proxies|routes|forwards|sends|goes|points)\s+(?:\w+\s+)?to\s+", re.I)
# a destination that says the route is not there: "`location /api/` → **MISSING**"
_NOWHERE = frozenset(
    ["missing", "none", "nothing", "broken", "absent", "error", "errors", "fails", "failing", "failed"]
    + ["404", "502", "503"]
)
_PORT = re.compile(r"(?:\bports?\s+|(?<=[\w\]]):)(\d{2,5})\b", re.I)
_POSSESSIVE = re.compile(r"['’]s\b")
_WORD = re.compile(r"[a-z][a-z0-9_.-]*[a-z0-9]|[a-z]")
# words any destination may have: they tell none apart
_GENERIC = frozenset(
    ["a", "an", "the", "its", "their", "our", "own", "to", "on", "at", "of", "via", "now", "directly"]
    + ["server", "servers", "service", "services", "app", "apps", "application", "api", "apis", "backend"]
    + ["process", "instance", "port", "local", "localhost", "http", "https", "endpoint", "endpoints"]
    + ["requests", "request", "calls", "traffic"]
)


@dataclass(frozen=True, slots=True)
class Route:
    path: str  # as written, less its quotes: `/api/`, `/api/mcp/*`
    every: bool  # said of all requests under the path
    port: str | None
    words: frozenset[str]  # the destination's distinguishing words


@lru_cache(maxsize=4096)  # the dream pass reads each statement once per pair it is in
def routes(text: str) -> tuple[Route, ...]:
    """Every route `text` states, one per clause at most."""
    found = []
    for clause in _CLAUSE.split(text):
        m = _VERB_FIRST.search(clause) or _PATH_FIRST.search(clause)
        if m is None or _DENIED.search(clause[: m.start()]):
            continue
        before = clause[: m.start("path")].rstrip("`")
        every = bool(m.groupdict().get("all")) or bool(_ALL_BEFORE.search(before))
        dest = _SENDS.sub("", _DEST_END.split(m.group("dest"), maxsplit=1)[0])
        port = _PORT.search(dest)
        words = frozenset(_WORD.findall(_POSSESSIVE.sub("", _PORT.sub(" ", dest)).lower())) - _GENERIC
        if port or (words and not words <= _NOWHERE):
            found.append(Route(m.group("path"), every, port.group(1) if port else None, words))
    return tuple(found)


def _key(path: str) -> str:
    return path.rstrip("*").rstrip("/")


def _covers(later: Route, path: str) -> bool:
    """Whether `later` speaks for requests to `path`: the same path, or all requests under it."""
    a, b = _key(later.path), _key(path)
    if a == b:
        return True
    if not later.every:
        return False
    glob = later.path.endswith("*") and not later.path.endswith("/*")  # `/mcp*` is `/mcp-http` too
    return b.startswith(a + "/") or (glob and b.startswith(a))


def _elsewhere(a: Route, b: Route) -> bool:
    """Two destinations that are not one: other ports, or, where a port is not named on both sides,
    no distinguishing word in common."""
    if a.port and b.port:
        return a.port != b.port
    return bool(a.words and b.words and not a.words & b.words)


def rerouted(old: str, new: str) -> bool:
    """Whether `new` sends a path `old` routes somewhere else: judged by the route of `new` that speaks
    for it most narrowly (its own path before a covering "all")."""
    later = routes(new)
    for route in routes(old):
        speaking = [r for r in later if _covers(r, route.path)]
        if speaking:
            narrowest = max(speaking, key=lambda r: len(_key(r.path)))
            if _elsewhere(route, narrowest):
                return True
    return False
