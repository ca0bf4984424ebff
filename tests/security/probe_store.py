"""A real local store the poisoning probes learn their sessions into (SQLite, the real embedder, the
inline runner), and the MCP tools they read it back with: explicit recall, `get` and the digest."""

from __future__ import annotations

from pathlib import Path

from cairn.api.mcp_tools import ToolServices, tool_specs
from cairn.bootstrap import build_container
from cairn.capture.upload import prepare
from cairn.domain.models import KeyScope, MemoryFilter, Principal
from cairn.services.uploads import UploadRequest
from cairn.settings import Settings


class Store:
    def __init__(self, home: Path) -> None:
        self.container = build_container(Settings(mode="local", home=home))
        team, _, self.secret = self.container.keys.create_team("probes", "dev")
        self.writer = Principal(team.id, "dev", "key-dev", frozenset({KeyScope.WRITE}))
        self.reader = Principal(team.id, "dev", "key-dev", frozenset({KeyScope.READ}))
        self.tools = {s.name: s for s in tool_specs(with_context=True)}
        self.services = ToolServices.from_container(self.container)

    def learn(self, agent: str, session_id: str, project: str, raw: bytes) -> None:
        data = prepare(raw).data
        target = self.container.uploads.request_upload(
            self.writer, UploadRequest(agent, session_id, project, 1, len(data))
        )
        self.container.blobs.put(target.key, data, "application/gzip")
        self.container.uploads.part_stored(target.key)
        session = self.container.runner.run(self.writer.team_id, session_id)
        assert session is not None and session.status == "learned", session and session.stats

    def memories(self, project: str) -> list:
        flt = MemoryFilter(project=project)
        return [
            m for m in self.container.pipeline.memory_repo.iter_team(self.writer.team_id) if flt.admits(m)
        ]

    def recall(self, project: str, query: str) -> dict:
        return self.tool("recall", query=query, project=project, limit=10)

    def tool(self, name: str, **args) -> dict:
        spec = self.tools[name]
        return spec.run(self.services, self.reader, spec.args.model_validate(args))


def closing(s: Store):
    yield s
    if s.container.runner is not None:
        s.container.runner.close()
    s.container.close()
