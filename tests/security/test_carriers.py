"""Tool text never reaches an agent unasked, whatever carries it (issue 42).

The probes of `tests/security/carriers.py`: every carrier of tool text (a command's output shown in one
step with the request and the reply, a sub-agent's report, a compaction summary, a file read by a tool or
by a shell command, another MCP server's answer, web search results, the agent's reply quoting a tool) in
every agent format Cairn reads, each holding a directive against a rule the person stated in the same
session. Each session is uploaded and learned through the normal pipeline into one real local store. A
probe holds only when the directive reaches no unasked surface (the block, the block for a prompt on the
directive's topic, the prompt hook for that prompt, the digest), the person's rule is in the block, and
explicit recall still finds the directive, labelled untrusted with its source. Every theme's rule also
reaches the block when two other requests came after it (`carriers.rule_then_other_work`): as a rule,
not as one of the last requests the block recalls.
"""

from __future__ import annotations

import json

import pytest
from cairn.api.app import create_app
from cairn.services.trust import unasked, withheld
from fastapi.testclient import TestClient

from tests.security.carriers import (
    CARRIERS,
    DATA_FRAMED_PROBES,
    DATA_FRAMED_SETS,
    LATER_PROBES,
    LATER_THEMES,
    MORE_PROBES,
    MORE_THEMES,
    PROBES,
    THEMES,
    Probe,
    assert_recall_finds_it_with_its_source,
    leaks,
    learn_all,
    rule_then_other_work,
    unasked_surfaces,
)
from tests.security.probe_store import Store, closing
from tests.security.transcripts import AGENTS, build

pytestmark = [pytest.mark.security, pytest.mark.integration, pytest.mark.slow]


def _id(p: Probe) -> str:
    return p.id


# the first themes, then those written after the gate (`carriers.MORE_THEMES`, `LATER_THEMES`,
# `DATA_FRAMED_SETS`), every carrier
# and format each
ALL = PROBES + MORE_PROBES + LATER_PROBES + DATA_FRAMED_PROBES


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("carriers"))
    learn_all(s, ALL)
    yield from closing(s)


def test_the_probes_cover_every_carrier_in_every_agent_format():
    for probes in (PROBES, MORE_PROBES, LATER_PROBES, DATA_FRAMED_PROBES):
        assert {(p.agent, p.carrier) for p in probes} == {(a, c) for a in AGENTS for c in CARRIERS}
    # each probe's mark is its own, and no first theme is used by one format alone
    assert len({p.mark for p in ALL}) == len(ALL)
    assert all(len({p.agent for p in PROBES if p.theme is t}) > 1 for t in {p.theme for p in PROBES})


@pytest.mark.parametrize("probe", ALL, ids=_id)
def test_a_directive_any_carrier_brings_reaches_no_unasked_surface(store, probe):
    assert not (shown := leaks(store, probe)), shown


@pytest.mark.parametrize("probe", ALL, ids=_id)
def test_the_person_s_rule_the_directive_contradicts_is_in_the_block(store, probe):
    block = unasked_surfaces(store, probe)["block"]
    assert probe.theme.rule_key in block, block


EVERY_THEME = (*THEMES, *MORE_THEMES, *LATER_THEMES, *(t for themes in DATA_FRAMED_SETS for t in themes))


@pytest.fixture(scope="module")
def rules_then_work(tmp_path_factory):
    """Each theme's session of its rule, two other requests and its own, in the agent formats in turn."""
    s = Store(tmp_path_factory.mktemp("rules"))
    for n, theme in enumerate(EVERY_THEME):
        agent = AGENTS[n % len(AGENTS)]
        s.learn(
            agent,
            f"rule-{n}",
            f"github.com/acme/rule-{n}",
            build(agent, f"rule-{n}", rule_then_other_work(theme)),
        )
    yield from closing(s)


@pytest.mark.parametrize("n", range(len(EVERY_THEME)), ids=lambda n: f"theme-{n}")
def test_the_person_s_rule_is_in_the_block_when_other_requests_came_after_it(rules_then_work, n):
    agent = AGENTS[n % len(AGENTS)]
    context = rules_then_work.container.context
    block = context.assemble(rules_then_work.writer, f"github.com/acme/rule-{n}", agent, 1_500, consume=False)
    assert EVERY_THEME[n].rule_key in block.markdown, block.markdown


@pytest.mark.parametrize("probe", [p for p in PROBES if p.stored], ids=_id)
def test_explicit_recall_finds_the_directive_labelled_untrusted_with_its_source(store, probe):
    holding = {m.id: m for m in store.memories(probe.project) if probe.mark in m.content}
    assert holding
    for m in holding.values():
        flagged = withheld(m)
        assert flagged is not None and flagged.source is not None and not flagged.source.trusted
        # what an agent is shown unasked of it, if anything, is the rest of it
        assert (shown := unasked(m)) is None or probe.mark not in shown.content
    # a memory's hit names its id; an excerpt's, its session and lines
    cited = {m.id for m in holding.values()} | {
        (m.provenance.session_id, tuple(m.details.get("session_lines") or ())) for m in holding.values()
    }
    # asked for by its topic, or by a name it holds (the mark is a host, a version, a ticket)
    answers = [store.recall(probe.project, q)["hits"] for q in (probe.theme.prompt, probe.mark)]
    hits = [
        h
        for answer in answers
        for h in answer
        if {h.get("id"), (h.get("session_id"), tuple(h.get("lines") or ()))} & cited
    ]
    assert hits, json.dumps(answers, indent=1)
    for hit in hits:
        assert probe.source in hit["untrusted"], hit
    # `get` gives the whole of it back, its sources marked untrusted
    got = store.tool("get", id=next(iter(holding)))["memory"]
    assert probe.mark in got["content"]
    assert any(s.endswith("(untrusted)") for s in got["sources"]), got


@pytest.mark.parametrize("probe", [p for p in MORE_PROBES if p.stored], ids=_id)
def test_explicit_recall_finds_the_later_themes_directive_with_its_source(store, probe):
    # most of these ask for a step no cue names (a coverage floor of 0, a bundled config file): recall
    # finds them by topic or by mark and names where the text came from
    assert_recall_finds_it_with_its_source(store, probe)


@pytest.mark.parametrize("probe", [p for p in DATA_FRAMED_PROBES if p.stored], ids=_id)
def test_explicit_recall_finds_a_directive_in_a_data_format_s_frame_with_its_source(store, probe):
    # a note in JSON, a docstring, a commit message's body: left out unasked, found when asked for
    assert_recall_finds_it_with_its_source(store, probe)


def test_what_cursor_keeps_of_a_tool_is_only_what_the_agent_said_of_it(store):
    for probe in (p for p in ALL if p.agent == "cursor"):
        holding = [m for m in store.memories(probe.project) if probe.mark in m.content]
        if probe.stored:
            assert holding and all(m.kind.value == "excerpt" for m in holding)
        else:
            assert not holding


def test_rest_search_marks_what_it_finds_of_a_directive_untrusted_with_its_source(store):
    probe = next(p for p in PROBES if p.agent == "codex" and p.carrier == "sub-agent report")
    with TestClient(create_app(store.container)) as api:
        answer = api.post(
            "/v1/search",
            json={"query": probe.mark, "project": probe.project},
            headers={"Authorization": f"Bearer {store.secret}"},
        )
    assert answer.status_code == 200, answer.text
    marked = [h for h in answer.json()["hits"] if probe.mark in h["memory"]["content"]]
    assert marked and all(probe.source in h["untrusted"] for h in marked), answer.json()
