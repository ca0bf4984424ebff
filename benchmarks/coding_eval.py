"""Coding-session memory benchmark: the protocol of benchmarks/data/coding-dev/README.md, end to end.

For each transcript + questions file: a fresh local store (SQLite, the real embedder); the transcript is
ingested as one session of one project exactly as `cairn ingest` does it (client-side redaction and gzip,
a presigned upload, the zero-LLM pipeline run by the inline runner); sub-agent files beside it
(`<session>/subagents/*.jsonl`) are uploaded as parts of the same session. Then:

- recall hit@10: each answerable question through the MCP `recall` tool (limit 10, project-scoped); the
  JSON an agent would be shown is searched for any `must_contain` string (case-insensitive);
- context hit: the session-start block (budget 1,500 tokens, no question) is searched the same way;
  the prompt-hook block for each question (the query-conditioned variant) on its own row;
- negatives: recall must return nothing (every hit below the relevance floor is withheld by the tool).

Reports per-kind figures, tokens shown, memories by kind, ingest time, misses with their cause, and
ends with one JSON line. With no arguments it runs the three dev transcripts.

    .venv/bin/python benchmarks/coding_eval.py [--transcript F --questions Q --project P] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from cairn.api.mcp_tools import ToolServices, tool_specs  # noqa: E402
from cairn.bootstrap import build_container, shared_embedder  # noqa: E402
from cairn.capture.upload import prepare  # noqa: E402
from cairn.domain.models import KeyScope, MemoryFilter, Principal  # noqa: E402
from cairn.services.tokens import count_many  # noqa: E402
from cairn.services.uploads import UploadRequest  # noqa: E402
from cairn.settings import Settings  # noqa: E402
from cairn.transcripts.detect import parse_transcript  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "coding-dev"
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
DEV_SETS = (
    ("entire-cli", FIXTURES / "claude-code/entire-cli/session-5a69ca08.jsonl", "entire-cli-questions.json"),
    (
        "context-evaluator",
        FIXTURES / "claude-code/context-evaluator/session-8ecab05f.jsonl",
        "context-evaluator-questions.json",
    ),
    ("agentv", FIXTURES / "codex/agentv/rollout-019efc87.jsonl", "agentv-codex-questions.json"),
)
RECALL_LIMIT = 10
CONTEXT_BUDGET = 1_500


def _agent_of(path: Path) -> str:
    """The agent whose format the transcript is in, as the product detects it (any agent it parses)."""
    return parse_transcript(path.read_bytes(), filename=path.name).agent


def _parts(path: Path) -> list[Path]:
    """The main transcript, then its sub-agents' files (Claude Code keeps them in <session>/subagents/)."""
    sub = path.with_suffix("") / "subagents"
    return [path, *sorted(sub.glob("*.jsonl"))] if sub.is_dir() else [path]


def ingest_session(container, caller, agent: str, session_id: str, project: str, parts: list[bytes]):
    """One session through the path `cairn ingest` takes: each part redacted and gzipped client-side,
    uploaded to a presigned target, then the zero-LLM pipeline run to the end; exits unless learned."""
    session = run_session(container, caller, agent, session_id, project, parts)
    if session is None or session.status != "learned":
        raise SystemExit(f"ingest of {session_id} failed: {session and session.stats.get('error')}")
    return session


def run_session(container, caller, agent: str, session_id: str, project: str, parts: list[bytes]):
    """`ingest_session` without the exit: the session as the pipeline left it, learned or failed (a
    transcript the parser refuses fails with the reason in `stats["error"]`)."""
    for number, raw in enumerate(parts, start=1):
        data = prepare(raw).data
        target = container.uploads.request_upload(
            caller, UploadRequest(agent, session_id, project, number, len(data))
        )
        container.blobs.put(target.key, data, "application/gzip")
        container.uploads.part_stored(target.key)
    return container.runner.run(caller.team_id, session_id)


class _Shown:
    """The recall service as the MCP tool calls it, keeping what the last call found: the memories
    behind the shown hits, whole (an excerpt's view carries no id to look it up by)."""

    def __init__(self, inner) -> None:
        self.inner, self.memories = inner, []

    def recall(self, *args, **kwargs):
        result = self.inner.recall(*args, **kwargs)
        self.memories = [h.memory for h in result.hits]
        return result

    def tool_text(self, *args, **kwargs):
        return self.inner.tool_text(*args, **kwargs)


def mcp_recall(container, team_id: str, project: str, limit: int = RECALL_LIMIT):
    """`recall(question) -> (text, tokens, hits, memories)`: the MCP `recall` tool's answer as the JSON
    text an agent is shown, its token count, its hits in rank order (its tool texts last) and the
    memories behind the ranked hits."""
    spec = {s.name: s for s in tool_specs(with_context=True)}["recall"]
    shown = _Shown(container.recall)
    services = replace(ToolServices.from_container(container), recall=shown)
    reader = Principal(team_id, "dev", "k", frozenset({KeyScope.READ}))

    def recall(question: str) -> tuple[str, int, list[dict], list]:
        args = spec.args.model_validate({"query": question, "project": project, "limit": limit})
        payload = spec.run(services, reader, args)
        text = json.dumps(payload, ensure_ascii=False, default=str)
        # what tools said past their excerpts is shown after the ranked hits: a hit too (a negative
        # question answered by it is answered)
        shown_hits = [*payload.get("hits", []), *payload.get("tool_text", [])]
        return as_read(text), count_many([text])[0], shown_hits, shown.memories

    return recall


def as_read(shown_json: str) -> str:
    """The JSON an agent is shown, as it reads it: a quote inside a string is a quote. Matched as
    written (`\\"`), an answer holding quotes (`"version": "0.0.1"`) could never be found."""
    return shown_json.replace('\\"', '"')


def contains_any(text: str, needles: list[str]) -> bool:
    low = text.lower()
    return any(n.lower() in low for n in needles)


def evaluate(transcript: Path, questions_path: Path, project: str, verbose: bool = False) -> dict:
    questions = json.loads(questions_path.read_text())
    with tempfile.TemporaryDirectory() as home:
        container = build_container(Settings(mode="local", home=Path(home)), embedder=shared_embedder())
        try:
            return _evaluate(container, transcript, questions, project, verbose)
        finally:
            if container.runner is not None:
                container.runner.close()
            container.close()


def _evaluate(container, transcript: Path, questions: list[dict], project: str, verbose: bool) -> dict:
    team, _, _ = container.keys.create_team("bench", "dev")
    caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
    agent = _agent_of(transcript)
    session_id = "bench-" + transcript.stem[:40]

    t0 = time.perf_counter()
    parts = [p.read_bytes() for p in _parts(transcript)]
    ingest_session(container, caller, agent, session_id, project, parts)
    ingest_s = time.perf_counter() - t0

    flt = MemoryFilter(project=project)
    memories = [m for m in container.pipeline.memory_repo.iter_team(team.id) if flt.admits(m)]
    by_kind = Counter(m.kind.value for m in memories)

    recall = mcp_recall(container, team.id, project)
    context = container.context.assemble(caller, project, agent, CONTEXT_BUDGET)

    rows = []
    recall_tokens = []
    for q in questions:
        if q["kind"] == "negative":
            _, tokens, hits, _ = recall(q["question"])
            rows.append({"id": q["id"], "kind": "negative", "passed": not hits, "shown": len(hits)})
            continue
        text, tokens, hits, found = recall(q["question"])
        recall_tokens.append(tokens)
        prompt_block = container.context.relevant(caller, project, q["question"]).markdown
        hit = contains_any(text, q["must_contain"])
        in_store = any(contains_any(m.content + " " + (m.title or ""), q["must_contain"]) for m in memories)
        in_hits = any(contains_any(m.content, q["must_contain"]) for m in found)
        rows.append(
            {
                "id": q["id"],
                "kind": q["kind"],
                "recall": hit,
                "context": contains_any(context.markdown, q["must_contain"]),
                "prompt": contains_any(prompt_block, q["must_contain"]),
                "cause": None
                if hit
                else "cut from the snippet"
                if in_hits
                else "ranked below 10"
                if in_store
                else "never extracted",
            }
        )
    return _report(rows, by_kind, context.tokens, recall_tokens, ingest_s, len(memories), verbose, context)


def _report(rows, by_kind, context_tokens, recall_tokens, ingest_s, n_memories, verbose, context) -> dict:
    answerable = [r for r in rows if r["kind"] != "negative"]
    negatives = [r for r in rows if r["kind"] == "negative"]
    per_kind: dict[str, dict[str, float]] = defaultdict(dict)
    for kind in sorted({r["kind"] for r in answerable}):
        of_kind = [r for r in answerable if r["kind"] == kind]
        for metric in ("recall", "context", "prompt"):
            per_kind[kind][metric] = round(sum(r[metric] for r in of_kind) / len(of_kind), 3)

    def mean(metric: str) -> float:
        return round(sum(r[metric] for r in answerable) / max(len(answerable), 1), 3)

    out = {
        "hit_at_10": mean("recall"),
        "context_hit": mean("context"),
        "prompt_hook_hit": mean("prompt"),
        "negatives_passed": sum(r["passed"] for r in negatives),
        "negatives": len(negatives),
        "context_tokens": context_tokens,
        "recall_tokens_p50": int(statistics.median(recall_tokens)) if recall_tokens else 0,
        "recall_tokens_max": max(recall_tokens, default=0),
        "memories": n_memories,
        "memories_by_kind": dict(sorted(by_kind.items())),
        "ingest_s": round(ingest_s, 2),
        "per_kind": dict(per_kind),
        "misses": {r["id"]: r["cause"] for r in answerable if not r["recall"]},
        "context_misses": [r["id"] for r in answerable if not r["context"]],
        "negatives_failed": [r["id"] for r in negatives if not r["passed"]],
    }
    if verbose:
        print(context.markdown)
    return out


def _print(name: str, r: dict) -> None:
    print(f"\n== {name}")
    print(
        f"  hit@10 {r['hit_at_10']:.2f}   context {r['context_hit']:.2f} ({r['context_tokens']} tokens)   "
        f"prompt hook {r['prompt_hook_hit']:.2f}   negatives {r['negatives_passed']}/{r['negatives']}"
    )
    print(
        f"  recall output tokens p50 {r['recall_tokens_p50']} max {r['recall_tokens_max']}   "
        f"ingest {r['ingest_s']:.2f} s   memories {r['memories']} {r['memories_by_kind']}"
    )
    for kind, m in r["per_kind"].items():
        print(f"  {kind:<11} hit@10 {m['recall']:.2f}  context {m['context']:.2f}  prompt {m['prompt']:.2f}")
    if r["misses"]:
        print("  recall misses: " + ", ".join(f"{k} ({v})" for k, v in r["misses"].items()))
    if r["negatives_failed"]:
        print("  negatives answered: " + ", ".join(r["negatives_failed"]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--transcript", type=Path)
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--project")
    parser.add_argument("--verbose", action="store_true", help="print the session-start block")
    args = parser.parse_args()
    if args.transcript or args.questions:
        if not (args.transcript and args.questions):
            parser.error("--transcript and --questions go together")
        for given in (args.transcript, args.questions):
            if not given.is_file():
                parser.error(f"no such file: {given}")
        sets = [(args.project or args.transcript.stem, args.transcript, args.questions)]
    else:
        sets = [(name, path, DATA / q) for name, path, q in DEV_SETS]
    shared_embedder().embed(["warm up"])
    results = {}
    for name, transcript, questions in sets:
        results[name] = evaluate(transcript, questions, args.project or name, args.verbose)
        _print(name, results[name])
    summary = {
        "benchmark": "coding_eval",
        "mode": "zero-llm",
        "sets": {
            name: {k: r[k] for k in ("hit_at_10", "context_hit", "prompt_hook_hit", "negatives_passed")}
            | {
                "ingest_s": r["ingest_s"],
                "memories": r["memories"],
                "recall_tokens_p50": r["recall_tokens_p50"],
            }
            for name, r in results.items()
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
