"""Near duplicates are found and decided by one rule in both modes (issue 25, learning parity).

Consolidation runs over a local store (SQLite, indexed inline) and over the AWS adapters (DynamoDB and
S3 on moto, OpenSearch on osmem-server, which has no k-NN). In AWS nothing indexes during a run: the
table's stream does it afterwards, which the tests do between sessions, as the indexer Lambda would. The
same candidates must give the same memories in both: a restatement from an earlier session merges (found
by its words when no k-NN answers), one within the same run merges before any index holds it, a fact
that only shares words stays apart, and a rerun of a session changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from cairn.bootstrap import build_container, shared_embedder
from cairn.domain.models import MemoryFilter, MemoryKind, Session
from cairn.pipeline.models import Candidate, EventsDoc
from cairn.pipeline.remembering.consolidation import Consolidation, prepared
from cairn.settings import Settings

from tests.contract.adapters_aws import (
    CREDENTIALS,
    REGION,
    aws_client,
    drop_table,
    moto_endpoint,
    new_table,
    osmem_server,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROJECT = "github.com/acme/shop"
STATED = "The API server listens on port 8080 in development"
RESTATED = "The API server listens on port 8080 during development."
APART = "The API server listens on port 9443 behind the production load balancer"


@pytest.fixture(scope="module")
def embedder():
    return shared_embedder()


@pytest.fixture(params=["local", "aws"])
def mode(request, tmp_path, monkeypatch, embedder) -> Iterator[tuple[str, object]]:
    if request.param == "local":
        container = build_container(Settings(mode="local", home=tmp_path / "home"), embedder=embedder)
        try:
            yield "local", container
        finally:
            container.close()
        return
    table = new_table()
    bucket = f"cairn-{uuid.uuid4().hex[:12]}"
    aws_client("s3").create_bucket(Bucket=bucket)
    for name, value in (
        ("AWS_ACCESS_KEY_ID", CREDENTIALS[0]),
        ("AWS_SECRET_ACCESS_KEY", CREDENTIALS[1]),
        ("AWS_DEFAULT_REGION", REGION),
        ("AWS_ENDPOINT_URL_S3", moto_endpoint()),
    ):
        monkeypatch.setenv(name, value)
    try:
        with osmem_server().clone() as clone:
            settings = Settings(
                mode="aws",
                table_name=table.name,
                bucket=bucket,
                opensearch_endpoint=clone.url,
                opensearch_auth="none",
                dynamo_endpoint=moto_endpoint(),
                aws_region=REGION,
            )
            yield "aws", build_container(settings, embedder=embedder)
    finally:
        drop_table(table)


def _learn(mode, team_id: str, session_id: str, *contents: str) -> None:
    """One consolidation run of these facts; then, in AWS, the stream's indexing of what it wrote."""
    name, container = mode
    session = Session(id=session_id, team_id=team_id, project=PROJECT, agent="claude-code", member="ana")
    events = EventsDoc(agent="claude-code", session_id=session_id, parts=[], events=[])
    batch = [Candidate(kind=MemoryKind.FACT, content=c, confidence=0.6) for c in contents]
    Consolidation(container.pipeline, session, events).apply(prepared(batch))
    if name == "aws":
        container.indexer.index(list(container.pipeline.memory_repo.iter_team(team_id)))


def _facts(mode, team_id: str) -> dict[str, list[str]]:
    _, container = mode
    return {
        m.content: list(m.details.get("sessions") or [])
        for m in container.pipeline.memory_repo.iter_team(team_id)
        if m.kind is MemoryKind.FACT and m.is_current
    }


def _team(mode) -> str:
    team, _, _ = mode[1].keys.create_team(f"parity-{uuid.uuid4().hex[:6]}", "ana")
    return team.id


def test_a_restatement_from_an_earlier_session_merges_in_both_modes(mode):
    team_id = _team(mode)
    _learn(mode, team_id, "s-1", STATED)
    _learn(mode, team_id, "s-2", RESTATED)
    assert _facts(mode, team_id) == {STATED: ["s-1", "s-2"]}


def test_a_restatement_within_one_run_merges_before_any_index_holds_it(mode):
    team_id = _team(mode)
    _learn(mode, team_id, "s-1", STATED, RESTATED)
    assert _facts(mode, team_id) == {STATED: ["s-1"]}


def test_a_fact_that_only_shares_words_stays_its_own_memory(mode):
    team_id = _team(mode)
    _learn(mode, team_id, "s-1", STATED)
    _learn(mode, team_id, "s-2", APART)
    assert _facts(mode, team_id) == {STATED: ["s-1"], APART: ["s-2"]}


def test_a_rerun_of_a_session_changes_nothing(mode):
    team_id = _team(mode)
    _learn(mode, team_id, "s-1", STATED)
    _learn(mode, team_id, "s-2", RESTATED, APART)
    before = {m.id: m for m in mode[1].pipeline.memory_repo.iter_team(team_id)}
    _learn(mode, team_id, "s-2", RESTATED, APART)
    after = {m.id: m for m in mode[1].pipeline.memory_repo.iter_team(team_id)}
    assert after == before


def test_without_knn_the_lexical_leg_is_what_finds_the_earlier_statement_on_osmem(mode):
    """Why the rule looks at both legs: osmem-server answers no k-NN, a real domain's HNSW may miss."""
    name, container = mode
    team_id = _team(mode)
    _learn(mode, team_id, "s-1", STATED)
    vector = container.embedder.embed([RESTATED])[0]
    found = container.pipeline.index.search(team_id, RESTATED, vector, MemoryFilter(project=PROJECT), 10, 10)
    assert [mid for mid, _ in found.lexical]
    assert bool(found.semantic) is (name == "local")
