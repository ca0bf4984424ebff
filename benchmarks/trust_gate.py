"""What the trust gate withholds on real sessions: the false positives of `cairn.services.trust`.

Every memory a real session leaves is, as far as this measure knows, legitimate; the gate must keep
from the session-start block, the prompt hook and the digest only text a tool supplied (or the agent
passed on) that reads as instructions to an agent. This ingests the dev sets exactly as `cairn ingest`
does (a fresh local store, the zero-LLM pipeline) and lists each memory the gate withholds whole, and
each part it leaves out of a transcript excerpt, with its kind, source, cue and text (a section of a
model-written session summary, or an excerpt of a compaction summary's text alone, is never shown
unasked, by design: those are counted apart), and how many
of the excerpts' lines an unasked surface leaves out with no cue of instructions (a tool's lines of
prose or requests, shown to explicit recall only):

- the three coding-dev transcripts (`coding_eval.DEV_SETS`), one store each;
- every multi-session project (`multi_session_eval.dev_sets`: safecast, then each folder of
  benchmarks/data/projects), its sessions in order, one store each.

    .venv/bin/python benchmarks/trust_gate.py [--project NAME ...] [--skip-coding] [--store DIR]

With `--store DIR` each set's store is kept in DIR/<set> and, when it is there already, read again
without ingesting: a change to what is shown unasked is measured in seconds (a change to what the
pipeline records at ingest needs fresh stores).
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
from cairn.domain.models import KeyScope, MemoryFilter, MemoryKind, Principal  # noqa: E402
from cairn.domain.vocabulary import Tag  # noqa: E402
from cairn.services.trust import document, label, left_out, parts, unasked, withheld  # noqa: E402
from cairn.services.uploads import UploadRequest  # noqa: E402
from cairn.settings import Settings  # noqa: E402
from coding_eval import DEV_SETS, _agent_of, _parts  # noqa: E402
from multi_session_eval import _read, dev_sets, upload_agent  # noqa: E402


def gate(
    name: str, sessions: list[tuple[str, str, list[Path]]], project: str, store: Path | None = None
) -> dict:
    """Ingest `sessions` ((agent, session id, parts), oldest first) and list what the gate withholds;
    with `store`, into that folder, or read from it when an earlier run left it there."""
    with tempfile.TemporaryDirectory() as scratch:
        home = store or Path(scratch)
        learned = (home / "team").is_file()
        home.mkdir(parents=True, exist_ok=True)
        container = build_container(Settings(mode="local", home=home), embedder=shared_embedder())
        try:
            if learned:
                team_id = (home / "team").read_text().strip()
            else:
                team, _, _ = container.keys.create_team("bench", "dev")
                team_id = team.id
            caller = Principal(team_id, "dev", "k", frozenset({KeyScope.WRITE}))
            for agent, session_id, files in [] if learned else sessions:
                for number, part in enumerate(files, start=1):
                    data = prepare(_read(part)).data  # the set's sessions are kept gzipped
                    target = container.uploads.request_upload(
                        caller, UploadRequest(agent, session_id, project, number, len(data))
                    )
                    container.blobs.put(target.key, data, "application/gzip")
                    container.uploads.part_stored(target.key)
                container.runner.run(team_id, session_id)
            if store is not None and not learned:
                (home / "team").write_text(team_id)
            flt = MemoryFilter(project=project)
            memories = [m for m in container.pipeline.memory_repo.iter_team(team_id) if flt.admits(m)]
        finally:
            if container.runner is not None:
                container.runner.close()
            container.close()
    held, cut, retold, summaries = [], [], [], 0
    excerpt_lines = lines_left_out = document_lines = document_left_out = 0
    for m in memories:
        if Tag.SUMMARY in m.tags:  # a summary's section is never shown unasked: by design, not a verdict
            summaries += 1
            continue
        shown = unasked(m)
        if m.kind is MemoryKind.EXCERPT:  # a tool's lines of prose or requests, left out without a cue
            lines = m.content.splitlines()
            kept = set(shown.content.splitlines()) if shown is not None else set()
            excerpt_lines += len(lines)
            lines_left_out += sum(1 for line in lines if line not in kept)
            for p in parts(m):  # a page's, another server's or an outside file's lines, apart
                if p.said_by == "tool" and document(p.source):
                    document_lines += len(p.text.splitlines())
                    document_left_out += sum(1 for line in p.text.splitlines() if line not in kept)
        if shown is m:
            continue
        w = withheld(m)
        if w is not None:
            cue, source = w.cue, label(w.source, 100) if w.source else None
        elif any(not s.trusted and s.directive for s in m.provenance.sources):
            cue, source = "recorded cue", None
        else:  # no cue of instructions: a tool's prose or request, or the agent's words retelling it
            cue, source = "a tool's prose, shown as data only", None
        if shown is None:
            withheld_whole = {"kind": m.kind.value, "cue": cue, "source": source, "text": _flat(m.content)}
            (retold if _summary_text(m) else held).append(withheld_whole)
            continue
        for p, why in left_out(m):
            where = label(why.source, 100) if why.source else None
            cut.append({"said_by": p.said_by, "cue": why.cue, "source": where, "text": _flat(p.text)})
    untrusted = sum(1 for m in memories if any(not s.trusted for s in m.provenance.sources))
    return {
        "set": name,
        "memories": len(memories),
        "with_untrusted_text": untrusted,
        "withheld": held,
        "cut": cut,
        "summary_sections": summaries,
        "summary_excerpts": retold,
        "excerpt_lines": excerpt_lines,
        "lines_left_out": lines_left_out,
        "document_lines": document_lines,
        "document_lines_left_out": document_left_out,
    }


def _summary_text(m) -> bool:
    """An excerpt of a compaction summary's text alone: it retells the conversation, the pages and files
    among it, with no word of whose each line was; like a summary's section, never shown unasked, by
    design (stop 50), and listed apart."""
    p = m.provenance
    return p.said_by == "tool" and bool(p.sources) and all(s.tool == "compaction summary" for s in p.sources)


def _flat(text: str) -> str:
    return " ".join(text.split())[:200]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--project", action="append", help="only these multi-session projects")
    parser.add_argument("--skip-coding", action="store_true")
    parser.add_argument("--store", type=Path, help="keep each set's store here, or read it again")
    args = parser.parse_args()

    def kept(name: str) -> Path | None:
        return args.store / name if args.store else None

    reports = []
    if not args.skip_coding:
        for project, transcript, _ in DEV_SETS:
            sid = "bench-" + transcript.stem[:40]
            reports.append(
                gate(project, [(_agent_of(transcript), sid, _parts(transcript))], project, kept(project))
            )
    for name, folder in dev_sets().items():
        if args.project and name not in args.project:
            continue
        data = json.loads((folder / "set.json").read_text())
        sessions = [(upload_agent(s["agent"]), s["id"], [folder / s["file"]]) for s in data["sessions"]]
        reports.append(gate(name, sessions, data["project"], kept(name)))
    for r in reports:
        print(
            f"== {r['set']}: {r['memories']} memories, {r['with_untrusted_text']} hold untrusted tool text, "
            f"{len(r['withheld'])} withheld, {len(r['cut'])} parts of excerpts left out, "
            f"{r['summary_sections']} summary sections and {len(r['summary_excerpts'])} excerpts of a "
            "compaction summary alone (never shown unasked), "
            f"{r['lines_left_out']} of {r['excerpt_lines']} excerpt lines shown to explicit recall only "
            f"({r['document_lines_left_out']} of {r['document_lines']} lines of documents)"
        )
        for w in r["withheld"]:
            print(f"  - withheld {w['kind']}: {w['cue']} (from {w['source']}): {w['text']}")
        for w in r["summary_excerpts"]:
            print(f"  - a compaction summary's text, never shown unasked: {w['text']}")
        for c in r["cut"]:
            print(f"  - left out ({c['said_by']}): {c['cue']} (from {c['source']}): {c['text']}")
    sets = {
        r["set"]: {
            "withheld": len(r["withheld"]),
            "cut": len(r["cut"]),
            "summaries": r["summary_sections"],
            "summary_excerpts": len(r["summary_excerpts"]),
            "lines_left_out": r["lines_left_out"],
            "excerpt_lines": r["excerpt_lines"],
            "document_lines_left_out": r["document_lines_left_out"],
            "document_lines": r["document_lines"],
        }
        for r in reports
    }
    print(json.dumps({"benchmark": "trust_gate", "sets": sets}))


if __name__ == "__main__":
    main()
