"""Multi-session project memory benchmark: the protocol of benchmarks/data/multi-session-dev/PROTOCOL.md.

One fresh local store (SQLite, the real embedder), one project. The sessions of `set.json` are ingested
oldest first, each as its own session, and each is learned before the next goes in. By default
(`--ingest backfill`) through `cairn backfill`'s path (`backfill_sets.py`): the set is laid out in a fake HOME
as each agent stores its sessions, `backfill.scan` finds them for the repository they ran in (the scan line
says how many of the set's it found), and `backfill.learn` sends them to the store served over HTTP on
127.0.0.1 (client-side redaction and gzip, the hooks' presigned uploads, started_at from the transcript)
and waits until each is learned. `--ingest direct` is the earlier loop, the path `cairn ingest` takes
(coding_eval.run_session: redaction and gzip, a presigned upload into the container, the zero-LLM pipeline
run in this thread). After the last one:

- recall hit@10: each answerable question through the MCP `recall` tool (limit 10, project-scoped); the JSON
  an agent is shown holds any `must_contain` string (case-insensitive; also counted on the whole texts of
  the same hits, what `get` would open). For `superseded` and `closed_item`
  also: walking the shown hits in rank order, the first that holds any `must_contain` or `must_not_contain`
  string holds a `must_contain` one; otherwise it is a stale-rank failure (and a miss);
- block: the session-start block (budget 1,500 tokens, no question); each `in_context` question is a hit when
  the block holds a `must_contain` string and no `must_not_contain` string;
- negatives pass when recall shows no hit (nothing, or "nothing relevant");
- a session's sub-agent transcripts (`extra` in set.json, its metadata.json aside) go as further parts of
  it on both paths; no dev set has any yet (their sub-agents' output is inline in the main transcripts);
- tokens shown per recall (p50/max), memories by kind, ingest time, memories per session (seconds per
  session: with backfill, from the end of the one before to its learned status, polled every 0.5 s; the
  ingest's CPU seconds, all threads of this process, move less with the box's other load than its wall time).

By default every dev project runs, one after the other, each in its own fresh store: safecast
(`benchmarks/data/multi-session-dev/`) and each set of `benchmarks/data/projects/`. `--project NAME` runs one
or several of them; `--set DIR` a set elsewhere (same layout). A session file may be kept gzipped as
`<file>.gz`. A session the parser refuses is counted as refused (its reason printed) and the run goes on.

Prints each project's details, then a table: a row per project, the mean and the minimum across projects;
ends with one JSON line holding all of it.

    .venv/bin/python benchmarks/multi_session_eval.py [--project NAME ...] [--set DIR ...] [--verbose]
        [--ingest backfill|direct] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import backfill_sets  # noqa: E402
from backfill_sets import AGENTS  # noqa: E402, F401 (the set's agent names, read by other benchmarks)
from backfill_sets import agent_name as upload_agent  # noqa: E402
from backfill_sets import read_recorded as _read  # noqa: E402
from cairn.bootstrap import build_container, shared_embedder  # noqa: E402
from cairn.domain.models import KeyScope, MemoryFilter, Principal  # noqa: E402
from cairn.services.uploads import AGENTS as UPLOAD_AGENTS  # noqa: E402
from cairn.settings import Settings  # noqa: E402
from coding_eval import CONTEXT_BUDGET, ROOT, as_read, contains_any, mcp_recall, run_session  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "multi-session-dev"  # safecast, the first dev project
PROJECTS = ROOT / "benchmarks" / "data" / "projects"  # the other dev projects, a folder each
INGESTS = ("backfill", "direct")
STALE_RULE_KINDS = ("superseded", "closed_item")


def dev_sets() -> dict[str, Path]:
    """The dev projects by name: safecast, then each folder of benchmarks/data/projects with a set.json."""
    found = {"safecast": DATA}
    if PROJECTS.is_dir():
        found |= {d.name: d for d in sorted(PROJECTS.iterdir()) if (d / "set.json").is_file()}
    return found


def check_agents(set_dir: Path, spec: dict) -> None:
    """Every session's agent maps to one an upload takes, and agrees with its metadata.json if it has one."""
    for s in spec["sessions"]:
        agent = upload_agent(s["agent"])
        if agent not in UPLOAD_AGENTS:
            raise SystemExit(
                f"{set_dir.name}: session {s['id'][:8]} agent {s['agent']!r} maps to no upload agent"
            )
        meta = set_dir / "sessions" / f"{s['id']}.metadata.json"
        said = json.loads(meta.read_text()).get("agent") if meta.is_file() else None
        if said and upload_agent(said) != agent:
            raise SystemExit(
                f"{set_dir.name}: session {s['id'][:8]} is {s['agent']!r}, its metadata says {said!r}"
            )


def _stale_first(hits: list[dict], q: dict) -> bool:
    """True when the first shown hit naming the current or the replaced value names only the replaced one."""
    current, stale = q.get("must_contain") or [], q.get("must_not_contain") or []
    for hit in hits:
        shown = as_read(json.dumps(hit, ensure_ascii=False, default=str))
        if contains_any(shown, current):
            return False
        if stale and contains_any(shown, stale):
            return True
    return False


def evaluate(
    set_dir: Path, verbose: bool = False, store: Path | None = None, ingest: str = "backfill"
) -> dict:
    spec = json.loads((set_dir / "set.json").read_text())
    check_agents(set_dir, spec)
    with tempfile.TemporaryDirectory() as scratch:
        home = store or Path(scratch) / "store"
        if store is not None and (store / LEARNED).is_file():
            # recall records each hit's use, which moves the recency prior: every run reads a fresh copy
            home = Path(scratch) / "store"
            shutil.copytree(store, home)
        # the port the backfill's server listens on, which its upload URLs name
        port = {"port": backfill_sets.free_port()} if ingest == "backfill" else {}
        container = build_container(Settings(mode="local", home=home, **port), embedder=shared_embedder())
        try:
            learned = (store / LEARNED) if store else None
            return _evaluate(container, set_dir, spec, verbose, learned, ingest, Path(scratch) / "backfill")
        finally:
            if container.runner is not None:
                container.runner.close()
            container.close()


LEARNED = "multi-session-eval.json"  # in a kept store: the team and the ingest figures, so it is not redone


def _ingest(container, set_dir: Path, spec: dict, verbose: bool) -> tuple[str, list[dict], float]:
    """`--ingest direct`: every session of the set into one new team, oldest first, each learned before
    the next goes in. A session the pipeline does not learn (a transcript the parser refuses) keeps its
    reason in its row."""
    team, _, _ = container.keys.create_team("bench", "dev")
    caller = Principal(team.id, "dev", "k", frozenset({KeyScope.WRITE}))
    per_session, ingest_s = [], 0.0
    for s in spec["sessions"]:
        parts = [_read(set_dir / f) for f in (s["file"], *backfill_sets.subagent_files(s))]
        t0 = time.perf_counter()
        session = run_session(container, caller, upload_agent(s["agent"]), s["id"], spec["project"], parts)
        took = time.perf_counter() - t0
        ingest_s += took
        row = {"session": s["id"][:8], "agent": s["agent"], "seconds": round(took, 2)}
        if session is None or session.status != "learned":
            row["refused"] = _reason(session)
            print(f"  {s['id'][:8]} ({s['agent']}) refused: {row['refused']}", flush=True)
        elif verbose:
            print(f"  ingested {s['id'][:8]} in {took:.1f} s", flush=True)
        per_session.append(row)
    return team.id, per_session, ingest_s


def _reason(session) -> str:
    """Why a session was not learned, in a line: the failed stage and its message."""
    error = session.stats.get("error") if session is not None else None
    if isinstance(error, dict):
        return f"{error.get('stage', '?')}: {error.get('message', error)}"
    return str(error or "not learned")


def _evaluate(
    container, set_dir: Path, spec: dict, verbose: bool, learned: Path | None, ingest: str, scratch: Path
) -> dict:
    project = spec["project"]
    agent = upload_agent(spec["sessions"][-1]["agent"])
    if learned is not None and learned.is_file():
        kept = json.loads(learned.read_text())
        team_id, per_session, ingest_s = kept["team"], kept["per_session"], kept["ingest_s"]
        ingest, scanned, cpu_s = kept.get("ingest", "direct"), kept.get("found", ""), kept.get("cpu_s", 0.0)
    else:
        cpu0 = time.process_time()  # every thread of this process: a figure the box's other load moves less
        if ingest == "backfill":
            team_id, per_session, ingest_s, scanned = backfill_sets.ingest(
                container, set_dir, spec, scratch, verbose
            )
        else:
            (team_id, per_session, ingest_s), scanned = _ingest(container, set_dir, spec, verbose), ""
        cpu_s = time.process_time() - cpu0
    if learned is not None and not learned.is_file():
        kept = {"team": team_id, "per_session": per_session, "ingest_s": ingest_s, "ingest": ingest}
        learned.write_text(json.dumps(kept | {"found": scanned, "cpu_s": cpu_s}))
    caller = Principal(team_id, "dev", "k", frozenset({KeyScope.WRITE}))
    flt = MemoryFilter(project=project)
    memories = [m for m in container.pipeline.memory_repo.iter_team(team_id) if flt.admits(m)]
    by_kind = Counter(m.kind.value for m in memories)
    from_session = Counter(m.provenance.session_id for m in memories)
    for row, s in zip(per_session, spec["sessions"], strict=True):
        row["memories"] = from_session.get(s["id"], 0)

    recall = mcp_recall(container, team_id, project)
    # a preview: the handoff stays pending, so a kept store shows the same block on every run
    block = container.context.assemble(caller, project, agent, CONTEXT_BUDGET, consume=False)

    rows = []
    recall_tokens = []
    for q in spec["questions"]:
        text, tokens, hits, found = recall(q["question"])
        if q["kind"] == "negative":
            rows.append({"id": q["id"], "kind": "negative", "passed": not hits, "shown": len(hits)})
            continue
        recall_tokens.append(tokens)
        mc, mnc = q["must_contain"], q.get("must_not_contain") or []
        stale = q["kind"] in STALE_RULE_KINDS and _stale_first(hits, q)
        hit = contains_any(text, mc) and not stale
        in_store = any(contains_any(m.content + " " + (m.title or ""), mc) for m in memories)
        in_hits = any(contains_any(m.content, mc) for m in found)
        cause = None
        if not hit:
            cause = (
                "stale value ranked first"
                if stale
                else "cut from the snippet"
                if in_hits
                else "ranked below 10"
                if in_store
                else "never extracted"
            )
        row = {"id": q["id"], "kind": q["kind"], "recall": hit, "stale": stale, "cause": cause}
        row["full_text"] = in_hits  # the same hits, their whole texts counted (what `get` would open)
        if q.get("in_context"):
            row["block"] = contains_any(block.markdown, mc) and not (
                mnc and contains_any(block.markdown, mnc)
            )
            if not row["block"]:
                row["block_cause"] = (
                    "stale value in the block"
                    if mnc and contains_any(block.markdown, mnc)
                    else "not in the block"
                )
        rows.append(row)
    out = _report(rows, by_kind, block, recall_tokens, ingest_s, per_session, memories, verbose, spec)
    return out | {"ingest": ingest, "found": scanned, "ingest_cpu_s": round(cpu_s, 1)}


def _report(rows, by_kind, block, recall_tokens, ingest_s, per_session, memories, verbose, spec) -> dict:
    answerable = [r for r in rows if r["kind"] != "negative"]
    negatives = [r for r in rows if r["kind"] == "negative"]
    in_context = [r for r in answerable if "block" in r]
    per_kind: dict[str, float] = {}
    for kind in sorted({r["kind"] for r in answerable}):
        of_kind = [r["recall"] for r in answerable if r["kind"] == kind]
        per_kind[kind] = round(sum(of_kind) / len(of_kind), 3)
    out = {
        "hit_at_10": round(sum(r["recall"] for r in answerable) / max(len(answerable), 1), 3),
        "hit_at_10_full_text": round(sum(r["full_text"] for r in answerable) / max(len(answerable), 1), 3),
        "per_kind": per_kind,
        "stale_rank_failures": [r["id"] for r in answerable if r["stale"]],
        "block_hits": sum(r["block"] for r in in_context),
        "block_questions": len(in_context),
        "block_tokens": block.tokens,
        "negatives_passed": sum(r["passed"] for r in negatives),
        "negatives": len(negatives),
        "recall_tokens_p50": int(statistics.median(recall_tokens)) if recall_tokens else 0,
        "recall_tokens_max": max(recall_tokens, default=0),
        "memories": len(memories),
        "memories_by_kind": dict(sorted(by_kind.items())),
        "ingest_s": round(ingest_s, 1),
        "sessions": len(per_session),
        "refused": {s["session"]: s["refused"] for s in per_session if "refused" in s},
        "per_session": per_session,
        "misses": {r["id"]: r["cause"] for r in answerable if not r["recall"]},
        "block_misses": {r["id"]: r["block_cause"] for r in in_context if not r["block"]},
        # the acceptance's "no stale line": a superseded value the block shows as current
        "block_stale": [r["id"] for r in in_context if r.get("block_cause") == "stale value in the block"],
        "negatives_failed": [r["id"] for r in negatives if not r["passed"]],
    }
    if verbose:
        questions = {q["id"]: q for q in spec["questions"]}
        print("\n-- session-start block\n" + block.markdown)
        print("\n-- recall misses")
        for qid, cause in out["misses"].items():
            print(f"  {qid} [{questions[qid]['kind']}] {cause}: {questions[qid]['question']}")
        print("-- block misses")
        for qid, cause in out["block_misses"].items():
            print(f"  {qid} [{questions[qid]['kind']}] {cause}: {questions[qid]['must_contain']}")
        kinds_by_session: dict[str, Counter] = defaultdict(Counter)
        for m in memories:
            kinds_by_session[(m.provenance.session_id or "-")[:8]][m.kind.value] += 1
        print("-- memories per session")
        for row in per_session:
            learned = "refused" if "refused" in row else dict(kinds_by_session[row["session"]])
            print(f"  {row['session']} {row['seconds']:6.1f} s  {learned}")
    return out


def _print(r: dict) -> None:
    print(
        f"\n  hit@10 {r['hit_at_10']:.2f} (full texts {r['hit_at_10_full_text']:.2f})   "
        f"stale-rank failures {len(r['stale_rank_failures'])}   "
        f"block {r['block_hits']}/{r['block_questions']} ({r['block_tokens']} tokens)   "
        f"negatives {r['negatives_passed']}/{r['negatives']}"
    )
    print(
        f"  recall output tokens p50 {r['recall_tokens_p50']} max {r['recall_tokens_max']}   "
        f"ingest {r['ingest_s']:.1f} s (CPU {r['ingest_cpu_s']:.1f} s)   "
        f"memories {r['memories']} {r['memories_by_kind']}"
    )
    print("  per kind: " + "  ".join(f"{k} {v:.2f}" for k, v in r["per_kind"].items()))
    print("  per session: " + "  ".join(f"{s['session']} {s['memories']}" for s in r["per_session"]))
    print(f"  ingest path: {r['ingest']}" + (f" (scan: {r['found']})" if r["found"] else ""))
    if r["refused"]:
        print(f"  refused {len(r['refused'])} of {r['sessions']}: " + ", ".join(r["refused"]))
    if r["misses"]:
        print("  recall misses: " + ", ".join(f"{k} ({v})" for k, v in r["misses"].items()))
    if r["negatives_failed"]:
        print("  negatives answered: " + ", ".join(r["negatives_failed"]))


SUMMARY_KEYS = (
    "hit_at_10",
    "hit_at_10_full_text",
    "stale_rank_failures",
    "block_stale",
    "block_hits",
    "block_questions",
    "block_tokens",
    "negatives_passed",
    "negatives",
    "recall_tokens_p50",
    "recall_tokens_max",
    "memories",
    "ingest_s",
    "ingest_cpu_s",
    "sessions",
    "refused",
    "ingest",
    "found",
)
# across projects: the mean of each, the minimum of the scores, the maximum of the costs
SCORES = ("hit_at_10", "hit_at_10_full_text", "block_fraction", "negatives_fraction")
COSTS = ("stale_rank", "stale_lines", "block_tokens", "recall_tokens_p50", "recall_tokens_max", "ingest_s")


def summarise(r: dict) -> dict:
    """One project's figures for the table and the JSON line."""
    out = {k: r[k] for k in SUMMARY_KEYS}
    out["stale_rank"] = len(r["stale_rank_failures"])
    out["stale_lines"] = len(r["block_stale"])
    out["block_fraction"] = round(r["block_hits"] / max(r["block_questions"], 1), 3)
    out["negatives_fraction"] = round(r["negatives_passed"] / max(r["negatives"], 1), 3)
    return out


def across(rows: dict[str, dict]) -> dict[str, dict]:
    """The mean of every figure over the projects, the minimum of the scores, the maximum of the costs."""
    mean = {k: round(statistics.fmean(r[k] for r in rows.values()), 3) for k in SCORES + COSTS}
    low = {k: min(r[k] for r in rows.values()) for k in SCORES}
    high = {k: max(r[k] for r in rows.values()) for k in COSTS}
    return {"mean": mean, "min": low, "max": high}


def _table(rows: dict[str, dict], agg: dict[str, dict]) -> None:
    head = (
        f"{'project':<16} {'sessions':<20} {'MCP':>5} {'full':>5} {'block':>11} {'stale':>5} {'tokens':>6} "
        f"{'stale':>5} {'neg':>5} {'recall p50/max':>14} {'ingest':>8}"
    )
    print("\n" + head + "\n" + "-" * len(head))
    for name, r in rows.items():
        sessions = f"{r['sessions']}" + (f" (refused {len(r['refused'])})" if r["refused"] else "")
        scanned = re.match(r"found (\d+) of (\d+)", r["found"] or "")
        if scanned and scanned[1] != scanned[2]:
            sessions += f" found {scanned[1]}"
        block = f"{r['block_hits']}/{r['block_questions']} {r['block_fraction']:.2f}"
        print(
            f"{name:<16} {sessions:<20} {r['hit_at_10']:>5.3f} {r['hit_at_10_full_text']:>5.3f} {block:>11} "
            f"{r['stale_lines']:>5} {r['block_tokens']:>6} {r['stale_rank']:>5} "
            f"{r['negatives_passed']:>2}/{r['negatives']:<2} "
            f"{r['recall_tokens_p50']:>6}/{r['recall_tokens_max']:<7} {r['ingest_s']:>6.1f} s"
        )
    if len(rows) < 2:
        return
    print("-" * len(head))
    for label, scores, costs in (("mean", agg["mean"], agg["mean"]), ("min", agg["min"], agg["max"])):
        print(
            f"{label:<16} {'':<20} {scores['hit_at_10']:>5.3f} {scores['hit_at_10_full_text']:>5.3f} "
            f"{scores['block_fraction']:>11.2f} {costs['stale_lines']:>5.1f} {costs['block_tokens']:>6.0f} "
            f"{costs['stale_rank']:>5.1f} "
            f"{scores['negatives_fraction']:>5.2f} "
            f"{costs['recall_tokens_p50']:>6.0f}/{costs['recall_tokens_max']:<7.0f} "
            f"{costs['ingest_s']:>6.1f} s"
        )
    print(
        "(the first stale: superseded values the block shows; the second: recall's stale-rank failures;\n"
        " min: the lowest project's score; under stale, tokens, recall and ingest: the highest)"
    )


def _chosen_sets(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Path]:
    """The sets to run: every dev project, or those named by --project, and any --set folder."""
    known = dev_sets()
    names = [n for arg in args.project or [] for n in arg.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"no project {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = {n: known[n] for n in names}
    for d in args.set or []:
        if not (d / "set.json").is_file():
            parser.error(f"no set.json in {d}")
        chosen[d.resolve().name] = d
    return chosen or known


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--project",
        action="append",
        help=f"a dev project by name, repeatable or comma-separated (default: all; {', '.join(dev_sets())})",
    )
    parser.add_argument(
        "--set", type=Path, action="append", help="a set folder elsewhere: set.json + sessions/"
    )
    parser.add_argument("--verbose", action="store_true", help="the block, each miss with its cause")
    parser.add_argument(
        "--ingest",
        choices=INGESTS,
        default="backfill",
        help="backfill (default): the set laid out as the agents store it, scanned and learned over HTTP "
        "by `cairn backfill`'s path; direct: the earlier loop, each session uploaded into the container",
    )
    parser.add_argument(
        "--store",
        type=Path,
        help="keep each project's learned store in a folder under this one and reuse it on the next run "
        "(recall and block only: a change to learning needs a fresh folder)",
    )
    args = parser.parse_args()
    sets = _chosen_sets(parser, args)
    shared_embedder().embed(["warm up"])
    rows = {}
    for name, set_dir in sets.items():
        print(
            f"\n== {name} ({set_dir.relative_to(ROOT) if set_dir.is_relative_to(ROOT) else set_dir})",
            flush=True,
        )
        store = None
        if args.store:
            store = args.store / name
            store.mkdir(parents=True, exist_ok=True)
        r = evaluate(set_dir, args.verbose, store, args.ingest)
        _print(r)
        rows[name] = summarise(r)
    agg = across(rows)
    _table(rows, agg)
    head = {"benchmark": "multi_session_eval", "mode": "zero-llm", "ingest": args.ingest, "projects": rows}
    print(json.dumps(head | agg))


if __name__ == "__main__":
    main()
