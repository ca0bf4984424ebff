"""The probe of keys limited to projects: a team with data in projects A and B, a key for A alone, and
for every REST route and MCP tool the requests that address B's data the way that surface takes it.

`PROJECT_B`'s data all holds `MARK`; what the limited key is answered must never hold it, nor an id of
B's it did not itself send, and no request of it may change B's data, a team-global memory or the keys.
The probe tables are keyed by route (method, OpenAPI path) and by tool name: the tests compare them with
what the app serves, so a route or tool added without a probe here fails.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, replace
from typing import Any

from cairn.domain import codec
from cairn.domain.ids import new_id
from cairn.domain.models import (
    KeyScope,
    Memory,
    MemoryFilter,
    MemoryKind,
    Principal,
    Provenance,
    Relation,
    Scope,
    Session,
)
from cairn.services.handoffs import CheckpointNote, HandoffNote, HandoffService
from cairn.services.memories import NewMemory
from cairn.services.uploads import transcript_key

PROJECT_A = "github.com/acme/alpha"
PROJECT_B = "github.com/acme/bravo"
TRANSFER = new_id("xfer")  # no such transfer: the limited key is refused before any lookup
MARK = "zebracorn"  # in every piece of B's data, and nowhere else
B_SESSION = "ses-bravo-0001"
A_SESSION = "ses-alpha-0001"


@dataclass
class World:
    team_id: str
    admin: str  # the team's admin key, every project
    limited: str  # an admin key limited to PROJECT_A
    admin_principal: Principal
    admin_key_id: str
    b: dict[str, str]  # B's memory and relation ids by role
    team_memory: str  # a team-global memory: readable by the limited key, never writable
    a_memory: str
    a_b_relation: str  # links A's memory to B's fact: the limited key must not see it

    @property
    def b_ids(self) -> set[str]:
        return {*self.b.values(), B_SESSION}


def seed(container) -> World:
    team, admin_key, admin = container.keys.create_team("probe", "lead")
    lead = container.keys.authenticate(admin)
    mem = container.memories

    def remember(kind: MemoryKind, content: str, project: str | None = PROJECT_B, **extra: Any) -> str:
        scope = extra.pop("scope", Scope.PROJECT)
        new = NewMemory(kind=kind, content=content, project=project, scope=scope, **extra)
        return mem.remember(lead, new).id

    born = Provenance(session_id=B_SESSION, agent="claude-code")
    b = {
        "fact": remember(MemoryKind.FACT, f"{MARK} bravo deploys blue-green on port 9443", provenance=born),
        "episode": remember(MemoryKind.EPISODE, f"{MARK} bravo release failed on a missing migration"),
        "procedure": remember(
            MemoryKind.PROCEDURE, f"{MARK} release bravo: run make release then tag", title=f"{MARK} release"
        ),
        "reflection": remember(MemoryKind.REFLECTION, f"{MARK} bravo reviews go faster with small diffs"),
        "personal": remember(MemoryKind.PREFERENCE, f"{MARK} lead prefers tabs", scope=Scope.PERSONAL),
    }
    handoffs = HandoffService(mem)
    b["handoff"] = handoffs.save_handoff(
        lead, HandoffNote(project=PROJECT_B, summary=f"{MARK} finish the bravo migration", agent="codex")
    ).id
    b["checkpoint"] = handoffs.save_checkpoint(
        lead, CheckpointNote(project=PROJECT_B, name="bravo-cp", content=f"{MARK} bravo halfway")
    ).id
    b["relation"] = mem.relate(lead, b["fact"], "relates-to", b["episode"]).id
    team_memory = remember(
        MemoryKind.FACT, "team-wide: every service logs JSON lines", project=None, scope=Scope.TEAM
    )
    a_memory = remember(MemoryKind.FACT, "alpha serves on port 8443 behind nginx", project=PROJECT_A)
    a_b_relation = mem.relate(lead, a_memory, "relates-to", b["fact"]).id
    for sid, project, words in ((B_SESSION, PROJECT_B, MARK), (A_SESSION, PROJECT_A, "alpha")):
        container.sessions.put(
            Session(id=sid, team_id=team.id, project=project, agent="claude-code", member="lead")
        )
        line = json.dumps({"type": "user", "message": {"role": "user", "content": f"{words} transcript"}})
        data = gzip.compress(((line + "\n") * 3).encode())
        container.blobs.put(transcript_key(team.id, project, sid, 1), data, "application/gzip")
    if container.settings.mode == "aws":
        # AWS mode: the stream indexer Lambda indexes what the table receives; here, at once
        every = mem.list(lead, MemoryFilter(include_superseded=True), limit=500).items
        container.indexer.index(list(every))
    _, limited = container.keys.create_key(
        lead, "contractor", "alpha only", frozenset({KeyScope.ADMIN}), projects=frozenset({PROJECT_A})
    )
    return World(team.id, admin, limited, lead, admin_key.id, b, team_memory, a_memory, a_b_relation)


def state(container, world: World) -> dict[str, Any]:
    """What the limited key must never change: everything outside PROJECT_A (B's memories, sessions and
    relations, team-global memories) and the team's keys. Access counts of team-global memories, which
    the limited key may read, and keys' last use are left out."""
    out: dict[str, Any] = {}
    # the stores themselves, as export reads them, less the vector look-ups (slow over moto and osmem)
    stores = container.portability
    records = [
        *(("session", codec.encode_session(s)) for s in stores._sessions.iter_team(world.team_id)),
        *(("memory", codec.encode_memory(m)) for m in stores._memories.iter_team(world.team_id)),
        *(("relation", codec.encode_relation(r)) for r in stores._relations.iter_team(world.team_id)),
    ]
    for kind, rec in records:
        if kind in ("memory", "session") and rec["project"] == PROJECT_A:
            continue
        if kind == "memory" and rec["project"] is None:
            rec = {k: v for k, v in rec.items() if k not in ("access_count", "last_accessed_at")}
        out[f"{kind}:{rec['id']}"] = rec
    keys = container.teams.list_keys(world.team_id)
    out["keys"] = sorted((k.id, k.revoked_at is None, k.projects is None) for k in keys)
    return out


def leaks(text: str, sent: str, world: World) -> list[str]:
    """What of B's an answer holds: the mark, or an id of B's that the request did not itself name."""
    found = [MARK] if MARK in text.lower() else []
    return found + sorted(i for i in world.b_ids if i in text and i not in sent)


def _import_lines(world: World) -> str:
    """Import lines that would write into B: a memory and a session of B, a relation to B's fact."""
    memory = Memory(
        id=new_id("mem"), team_id=world.team_id, kind=MemoryKind.FACT, content="imported into bravo"
    )
    memory = replace(memory, project=PROJECT_B)
    session = Session(id="ses-bravo-import", team_id=world.team_id, project=PROJECT_B, agent="codex")
    a_new = replace(memory, id=new_id("mem"), project=PROJECT_A, content="imported into alpha")
    relation = Relation(
        id=new_id("rel"), team_id=world.team_id, source_id=a_new.id, predicate="relates-to",
        target_id=world.b["fact"],
    )  # fmt: skip
    bodies = [
        [{"type": "memory", "record": codec.encode_memory(memory)}],
        [{"type": "session", "record": codec.encode_session(session)}],
        [
            {"type": "memory", "record": codec.encode_memory(a_new)},
            {"type": "relation", "record": codec.encode_relation(relation)},
        ],
    ]
    return ["\n".join(json.dumps(x) for x in body) + "\n" for body in bodies]


def rest_probes(world: World) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per route, the requests (httpx `request` keyword arguments) that reach for B's data."""
    b = world.b
    b_memories = [b[k] for k in ("fact", "episode", "procedure", "reflection", "personal", "handoff")]
    b_written = [b["fact"], b["handoff"]]  # writes go through one check (`writable`): two kinds suffice
    to_b = {"kind": "fact", "content": "written into bravo", "project": PROJECT_B}
    team_wide = {"kind": "fact", "content": "written team-wide", "scope": "team"}
    personal_b = {**to_b, "scope": "personal"}
    new_b = "ses-bravo-0002"
    upload = {"agent": "claude-code", "part": 1, "bytes": 100, "content_type": "application/gzip"}

    def get(url: str, **params: Any) -> dict[str, Any]:
        return {"method": "GET", "url": url, "params": params}

    def send(method: str, url: str, body: Any = None, **params: Any) -> dict[str, Any]:
        return {"method": method, "url": url, "json": body, "params": params}

    return {
        ("GET", "/v1/health"): [get("/v1/health")],
        ("GET", "/v1/whoami"): [get("/v1/whoami")],
        ("POST", "/v1/memories"): [send("POST", "/v1/memories", x) for x in (to_b, team_wide, personal_b)],
        ("GET", "/v1/memories"): [
            get("/v1/memories"),
            get("/v1/memories", project=PROJECT_B),
            get("/v1/memories", session_id=B_SESSION, include_superseded=True),
            get("/v1/memories", scope="personal"),
            get("/v1/memories", kind="handoff", include_superseded=True),
            get("/v1/memories", project=PROJECT_A),  # A's listing, with team-global ones: no B
        ],
        ("GET", "/v1/memories/{memory_id}"): [get(f"/v1/memories/{i}") for i in b_memories],
        ("PATCH", "/v1/memories/{memory_id}"): [
            send("PATCH", f"/v1/memories/{i}", {"content": "hijacked", "pinned": True})
            for i in (*b_written, world.team_memory)
        ],
        ("DELETE", "/v1/memories/{memory_id}"): [
            send("DELETE", f"/v1/memories/{i}") for i in (*b_written, world.team_memory)
        ],
        ("POST", "/v1/memories/{memory_id}/supersede"): [
            send("POST", f"/v1/memories/{i}/supersede", {"kind": "fact", "content": "replaced", "project": p})
            for i in (b["fact"], world.team_memory)
            for p in (PROJECT_A, PROJECT_B)
        ],
        ("GET", "/v1/memories/{memory_id}/relations"): [
            get(f"/v1/memories/{b['fact']}/relations"),
            get(f"/v1/memories/{world.a_memory}/relations"),  # its link to B's fact stays unseen
        ],
        ("POST", "/v1/relations"): [
            send("POST", "/v1/relations", {"source_id": s, "predicate": "relates-to", "target_id": t})
            for s, t in (
                (world.a_memory, b["episode"]),
                (b["episode"], world.a_memory),
                (b["fact"], b["procedure"]),
                (world.a_memory, world.team_memory),
            )
        ],
        ("DELETE", "/v1/relations/{relation_id}"): [
            send("DELETE", f"/v1/relations/{r}") for r in (b["relation"], world.a_b_relation)
        ],
        ("POST", "/v1/search"): [
            send("POST", "/v1/search", {"query": "bravo deploys blue-green port"}),
            send("POST", "/v1/search", {"query": "bravo deploys blue-green port", "project": PROJECT_B}),
            send("POST", "/v1/search", {"query": "bravo release migration", "project": PROJECT_A}),
        ],
        ("GET", "/v1/sessions"): [get("/v1/sessions"), get("/v1/sessions", project=PROJECT_B)],
        ("GET", "/v1/admin/keys"): [get("/v1/admin/keys")],
        ("POST", "/v1/admin/keys"): [
            send("POST", "/v1/admin/keys", {"member": "mallory", "scopes": ["admin"]}),
            send("POST", "/v1/admin/keys", {"member": "mallory", "projects": [PROJECT_B]}),
            send("POST", "/v1/admin/keys", {"member": "mallory", "projects": [PROJECT_A]}),
        ],
        ("DELETE", "/v1/admin/keys/{key_id}"): [send("DELETE", f"/v1/admin/keys/{world.admin_key_id}")],
        ("GET", "/v1/admin/export"): [get("/v1/admin/export")],
        ("POST", "/v1/admin/import"): [
            {"method": "POST", "url": "/v1/admin/import", "content": body} for body in _import_lines(world)
        ],
        ("GET", "/v1/context"): [
            get("/v1/context", project=PROJECT_B, agent="codex"),
            get("/v1/context", project=PROJECT_B, prompt="bravo deploys blue-green"),
            get("/v1/context", project=PROJECT_A, agent="codex", prompt="bravo deploys blue-green port"),
        ],
        ("GET", "/v1/context/prompt"): [
            get("/v1/context/prompt", project=PROJECT_B, prompt="how does bravo deploy?"),
            get("/v1/context/prompt", project=PROJECT_A, prompt="bravo deploys blue-green on which port?"),
        ],
        ("POST", "/v1/uploads"): [
            send("POST", "/v1/uploads", {**upload, "session_id": new_b, "project": PROJECT_B}),
            # B's session id under A: refused without naming B's project
            send("POST", "/v1/uploads", {**upload, "session_id": B_SESSION, "project": PROJECT_A}),
        ],
        # takes no key: a grant comes only from POST /v1/uploads, which checks the project; a forged
        # grant is refused
        ("PUT", "/v1/uploads/{token}"): [
            {
                "method": "PUT",
                "url": f"/v1/uploads/{world.team_id}.{B_SESSION}.forged",
                "content": gzip.compress(b"{}\n"),
                "headers": {"Content-Type": "application/gzip"},
            }
        ],
        # takes no key either: a download link comes only from an export's status, which the limited
        # key is refused; a forged one is refused
        ("GET", "/v1/downloads/{token}"): [
            get(f"/v1/downloads/{world.team_id}.transfers.{TRANSFER}.export.forged")
        ],
        ("GET", "/v1/sessions/{session_id}"): [get(f"/v1/sessions/{B_SESSION}")],
        ("POST", "/v1/sessions/{session_id}/reprocess"): [
            send("POST", f"/v1/sessions/{B_SESSION}/reprocess", {"force": True})
        ],
        ("GET", "/v1/sessions/{session_id}/transcript"): [
            get(f"/v1/sessions/{B_SESSION}/transcript", line_start=1, around=5)
        ],
        # whole-team transfers need a key for every project: refused to the limited key before anything
        ("POST", "/v1/admin/exports"): [send("POST", "/v1/admin/exports")],
        ("GET", "/v1/admin/exports/{transfer_id}"): [get(f"/v1/admin/exports/{TRANSFER}")],
        ("POST", "/v1/admin/imports"): [send("POST", "/v1/admin/imports", {"bytes": 100})],
        ("POST", "/v1/admin/imports/{transfer_id}/start"): [
            send("POST", f"/v1/admin/imports/{TRANSFER}/start")
        ],
        ("GET", "/v1/admin/imports/{transfer_id}"): [get(f"/v1/admin/imports/{TRANSFER}")],
        ("GET", "/v1/projects/{project}/digest"): [
            get(f"/v1/projects/{PROJECT_B}/digest"),
            get(f"/v1/projects/{PROJECT_B}/digest", sessions=5),
        ],
        ("GET", "/v1/audit"): [get("/v1/audit"), get("/v1/audit", target=b["fact"])],
        ("GET", "/v1/memories/{memory_id}/audit"): [get(f"/v1/memories/{i}/audit") for i in b_memories],
        # the marker is B's content: a redaction reaching B would change it
        ("POST", "/v1/admin/redact"): [
            send("POST", "/v1/admin/redact", {"string": MARK}),
            send("POST", "/v1/admin/redact", {"string": MARK, "project": PROJECT_B}),
        ],
    }


def mcp_probes(world: World) -> dict[str, list[dict[str, Any]]]:
    """Per MCP tool, the arguments that reach for B's data."""
    b = world.b
    b_memories = [b[k] for k in ("fact", "episode", "procedure", "reflection", "personal", "handoff")]
    b_written = [b["fact"], b["handoff"]]  # writes go through one check (`writable`): two kinds suffice
    return {
        "remember": [
            {"content": "written into bravo", "kind": "fact", "project": PROJECT_B},
            {"content": "written team-wide", "kind": "fact", "scope": "team"},
            {"content": "mine in bravo", "kind": "preference", "scope": "personal", "project": PROJECT_B},
        ],
        "recall": [
            {"query": "bravo deploys blue-green port"},
            {"query": "bravo deploys blue-green port", "project": PROJECT_B},
            {"query": "bravo release migration", "project": PROJECT_A},
        ],
        "get": [{"id": i} for i in b_memories],
        "update": [{"id": i, "content": "hijacked"} for i in (*b_written, world.team_memory)],
        "forget": [{"id": i} for i in (*b_written, world.team_memory)],
        "supersede": [
            {"id": i, "content": "replaced", "reason": "probe"} for i in (b["fact"], world.team_memory)
        ],
        "relate": [
            {"source_id": world.a_memory, "predicate": "relates-to", "target_id": b["episode"]},
            {"source_id": b["fact"], "predicate": "relates-to", "target_id": b["procedure"]},
            {"source_id": world.a_memory, "predicate": "relates-to", "target_id": world.team_memory},
        ],
        "unrelate": [{"relation_id": r} for r in (b["relation"], world.a_b_relation)],
        "graph": [{"id": b["fact"]}, {"id": world.a_memory, "depth": 3}],
        "episodes": [{"project": PROJECT_B}, {}],
        "procedures": [{"project": PROJECT_B}, {}],
        "record_procedure_outcome": [{"id": b["procedure"], "outcome": "success"}],
        "sessions": [{}, {"project": PROJECT_B}],
        "transcript": [{"session_id": B_SESSION, "line_start": 1, "around": 5}],
        "timeline": [{"session_id": B_SESSION}],
        "reflections": [{"project": PROJECT_B}, {}, {"session_id": B_SESSION}],
        "handoff_save": [{"project": PROJECT_B, "summary": "handed into bravo", "agent": "codex"}],
        "handoff_get": [{"project": PROJECT_B, "agent": "codex"}, {"project": PROJECT_B, "consume": False}],
        "checkpoint_save": [{"project": PROJECT_B, "name": "cp", "content": "into bravo"}],
        "checkpoint_list": [{"project": PROJECT_B}],
        "checkpoint_restore": [{"id": b["checkpoint"]}, {"project": PROJECT_B, "name": "bravo-cp"}],
        "context": [
            {"project": PROJECT_B, "agent": "codex"},
            {"project": PROJECT_A, "prompt": "bravo deploy"},
        ],
        "feedback": [{"id": i, "signal": "helpful"} for i in (b["fact"], world.team_memory)],
        "digest": [{"project": PROJECT_B}, {"project": PROJECT_B, "sessions": 5}],
    }


def ui_probes(world: World) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per web UI route, the requests that reach for B's data (a POST's form gets the session's CSRF
    token added by the test)."""
    b = world.b
    ids = (b["fact"], b["handoff"], world.team_memory)

    def get(url: str, **params: Any) -> dict[str, Any]:
        return {"method": "GET", "url": url, "params": params}

    def post(url: str, **form: Any) -> dict[str, Any]:
        return {"method": "POST", "url": url, "data": form}

    return {
        ("GET", "/"): [get("/")],
        ("GET", "/ui/static/{name}"): [get("/ui/static/cairn.js")],
        ("GET", "/ui/login"): [get("/ui/login")],
        ("POST", "/ui/login"): [post("/ui/login", key="not a key")],
        ("POST", "/ui/logout"): [post("/ui/logout")],
        ("GET", "/ui/"): [get("/ui/")],
        ("GET", "/ui/context"): [
            get("/ui/context", project=PROJECT_B),
            get("/ui/context", project=PROJECT_A),
        ],
        ("GET", "/ui/keys"): [get("/ui/keys")],
        ("GET", "/ui/reindex"): [get("/ui/reindex")],
        ("POST", "/ui/keys"): [post("/ui/keys", member="mallory", name="wide", scope="admin")],
        ("POST", "/ui/keys/{key_id}/revoke"): [post(f"/ui/keys/{world.admin_key_id}/revoke")],
        ("GET", "/ui/memories"): [
            get("/ui/memories"),
            get("/ui/memories", project=PROJECT_B),
            get("/ui/memories", q="bravo deploys blue-green port"),
            get("/ui/memories", session=B_SESSION, superseded="1"),
        ],
        ("GET", "/ui/memories/{memory_id}"): [get(f"/ui/memories/{i}") for i in ids],
        ("POST", "/ui/memories/{memory_id}/edit"): [
            post(f"/ui/memories/{i}/edit", content="hijacked", title="", tags="") for i in ids
        ],
        ("POST", "/ui/memories/{memory_id}/pin"): [post(f"/ui/memories/{i}/pin", pinned="1") for i in ids],
        ("POST", "/ui/memories/{memory_id}/forget"): [post(f"/ui/memories/{i}/forget") for i in ids],
        ("POST", "/ui/memories/{memory_id}/supersede"): [
            post(f"/ui/memories/{i}/supersede", content="replaced", title="", tags="") for i in ids
        ],
        ("POST", "/ui/memories/{memory_id}/feedback"): [
            post(f"/ui/memories/{i}/feedback", signal="helpful", note="") for i in ids
        ],
        ("GET", "/ui/sessions"): [get("/ui/sessions"), get("/ui/sessions", project=PROJECT_B)],
        ("GET", "/ui/digest"): [get("/ui/digest"), get("/ui/digest", project=PROJECT_B)],
        ("GET", "/ui/sessions/{session_id}"): [get(f"/ui/sessions/{B_SESSION}")],
        ("POST", "/ui/sessions/{session_id}/reprocess"): [
            post(f"/ui/sessions/{B_SESSION}/reprocess", force="1")
        ],
        ("GET", "/ui/sessions/{session_id}/transcript"): [
            get(f"/ui/sessions/{B_SESSION}/transcript", line_start=1)
        ],
    }
