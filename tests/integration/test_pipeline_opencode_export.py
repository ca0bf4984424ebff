"""`cairn ingest` of what `opencode export` prints: a real 1.4.3 export (one pretty-printed JSON document,
tests/fixtures/transcripts/opencode/session-bridge) uploaded as the CLI does and learned end to end."""

from __future__ import annotations

import pytest

from tests.integration.capture_helpers import hook_env
from tests.integration.pipeline_helpers import learn, memories_of
from tests.integration.test_pipeline_cli import cairn
from tests.paths import TRANSCRIPTS

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXPORT = TRANSCRIPTS / "opencode" / "session-bridge" / "ses_27a3283eeffe2okXvUQaxKJ0Nw.json"
SID = "ses_27a3283eeffe2okXvUQaxKJ0Nw"


def test_an_opencode_export_is_learned_and_its_request_and_patch_are_searchable(container, api, team_a):
    session = learn(
        container,
        api,
        team_a.headers,
        raw=EXPORT.read_bytes(),
        session_id=SID,
        project="sb",
        agent="opencode",
    )

    assert session["status"] == "learned", session["stats"]
    assert session["stats"]["parse"]["events"] == 14
    text = "\n".join(m["content"] for m in memories_of(api, team_a.headers, "sb", kind="excerpt"))
    assert "Create LICENSE.md file with MIT license" in text
    assert "LICENSE.md" in text and "No files found" in text


def test_cairn_ingest_reads_the_export_file_as_it_is(tmp_path, server):
    env = hook_env(tmp_path / "cli-home", server.url, server.key)

    code, out = cairn(env, "ingest", str(EXPORT), "--project", "sb", "--wait")

    assert code == 0, out
    assert f"uploaded session {SID} (opencode, project sb)" in out
    assert server.container.sessions.get(server.team_id, SID).status == "learned"
