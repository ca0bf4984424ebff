"""What the trust gate withholds on real sessions: the false positives of `cairn.services.trust`.

Every memory a real session leaves is, as far as this measure knows, legitimate; the gate must keep
from the session-start block and the prompt hook only text a tool returned that reads as instructions
to an agent. This ingests the dev sets exactly as `cairn ingest` does (a fresh local store, the
zero-LLM pipeline) and lists each memory the gate withholds, with its kind, source and cue:

- the three coding-dev transcripts (`coding_eval.DEV_SETS`), one store each;
- the multi-session set (`benchmarks/data/multi-session-dev/set.json`), its sessions in order, one store.

    .venv/bin/python benchmarks/trust_gate.py [--multi-session DIR] [--skip-coding]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cairn.bootstrap import build_container, shared_embedder  # noqa: E402
from cairn.capture.upload import prepare  # noqa: E402
from cairn.domain.models import KeyScope, MemoryFilter, Principal  # noqa: E402
from cairn.services.trust import label, withheld  # noqa: E402
from cairn.services.uploads import UploadRequest  # noqa: E402
from cairn.settings import Settings  # noqa: E402
from coding_eval import DEV_SETS, _agent_of, _parts  # noqa: E402
from multi_session_eval import AGENTS, DATA, _read  # noqa: E402


def gate(name: str, sessions: list[tuple[str, str, list[Path]]], project: str) -> dict:
    """Ingest `sessions` ((agent, session id, parts), oldest first) and list what the gate withholds."""
    with tempfile.TemporaryDirectory() as home:
        container = build_container(Settings(mode="local", home=Path(home)), embedder=shared_embedder())
        try:
            team, _, _ = container.keys.create_team("bench", "dev")
            caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
            for agent, session_id, parts in sessions:
                for number, part in enumerate(parts, start=1):
                    data = prepare(_read(part)).data  # the set's sessions are kept gzipped
                    target = container.uploads.request_upload(
                        caller, UploadRequest(agent, session_id, project, number, len(data))
                    )
                    container.blobs.put(target.key, data, "application/gzip")
                    container.uploads.part_stored(target.key)
                container.runner.run(team.id, session_id)
            flt = MemoryFilter(project=project)
            memories = [m for m in container.pipeline.memory_repo.iter_team(team.id) if flt.admits(m)]
        finally:
            if container.runner is not None:
                container.runner.close()
            container.close()
    held = []
    for m in memories:
        if (w := withheld(m)) is not None:
            held.append(
                {
                    "kind": m.kind.value,
                    "cue": w.cue,
                    "source": label(w.source, 100) if w.source else None,
                    "text": " ".join(m.content.split())[:160],
                }
            )
    untrusted = sum(1 for m in memories if any(not s.trusted for s in m.provenance.sources))
    return {"set": name, "memories": len(memories), "with_untrusted_text": untrusted, "withheld": held}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--multi-session", type=Path, default=DATA)
    parser.add_argument("--skip-coding", action="store_true")
    args = parser.parse_args()
    reports = []
    if not args.skip_coding:
        for project, transcript, _ in DEV_SETS:
            sid = "bench-" + transcript.stem[:40]
            reports.append(gate(project, [(_agent_of(transcript), sid, _parts(transcript))], project))
    spec = args.multi_session / "set.json"
    if spec.exists():
        data = json.loads(spec.read_text())
        sessions = [
            (AGENTS.get(s["agent"], s["agent"]), s["id"], [args.multi_session / s["file"]])
            for s in data["sessions"]
        ]
        reports.append(gate(args.multi_session.name, sessions, data["project"]))
    for r in reports:
        print(
            f"== {r['set']}: {r['memories']} memories, {r['with_untrusted_text']} hold untrusted tool text, "
            f"{len(r['withheld'])} withheld"
        )
        for w in r["withheld"]:
            print(f"  - {w['kind']}: {w['cue']} (from {w['source']}): {w['text']}")
    print(json.dumps({"benchmark": "trust_gate", "sets": {r["set"]: len(r["withheld"]) for r in reports}}))


if __name__ == "__main__":
    main()
