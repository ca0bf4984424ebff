"""Cairn's OpenCode plugin under Node, fed the events OpenCode 1.18.33 really sent (tests/events/opencode).

`opencode run` exits as soon as its session is idle. The plugin must have written the session and run the
capture hook by then, without waiting on OpenCode's API: here the API never answers and the process exits in
the same tick as the idle event, as `run` may.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cairn.cli.agents.opencode import plugin_source
from cairn.transcripts import Role, parse_transcript

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
]

EVENTS = Path(__file__).resolve().parents[1] / "events" / "opencode" / "run-1.18.33.jsonl"
SESSION = "ses_df7423141ffeqQA6bFS0F5bDWv"

# replay the events without awaiting the plugin (OpenCode's bus does not wait for it either); exit right
# after the first idle status, as `opencode run` does
DRIVER = """
import { readFileSync } from "node:fs"
const { CairnPlugin } = await import(process.argv[2])
const never = new Promise(() => {})
const client = { session: { messages: () => never } }
const hooks = await CairnPlugin({ client, directory: process.argv[4] })
for (const line of readFileSync(process.argv[3], "utf8").split("\\n")) {
  if (!line.trim()) continue
  const event = JSON.parse(line)
  hooks.event({ event })
  if (event.type === "session.status" && event.properties.status.type === "idle") process.exit(0)
}
process.exit(3)
"""


def test_the_session_is_written_and_handed_to_capture_before_opencode_run_exits(tmp_path):
    plugin = tmp_path / "cairn.mjs"
    plugin.write_text(plugin_source(sys.executable))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    data, cairn_home = tmp_path / "data", tmp_path / "cairn-home"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(data),
        "CAIRN_HOME": str(cairn_home),
        "CAIRN_CAPTURE_NO_WORKER": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "layers" / "core"),
    }

    proc = subprocess.run(
        ["node", str(driver), str(plugin), str(EVENTS), "/tmp/cpx/oc/run/project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr
    transcript = data / "opencode" / "cairn" / f"{SESSION}.jsonl"
    [request] = [json.loads(p.read_text()) for p in (cairn_home / "capture" / "requests").glob("*.json")]
    assert (request["agent"], request["session_id"], request["event"]) == ("opencode", SESSION, "stop")
    assert request["transcript_path"] == str(transcript)
    parsed = parse_transcript(transcript.read_bytes(), agent="opencode")
    assert [(e.role, e.tool_name) for e in parsed.events] == [
        (Role.USER, None),
        (Role.TOOL_CALL, "bash"),
        (Role.TOOL_RESULT, "bash"),
        (Role.ASSISTANT, None),
    ]
    assert "We always run ruff before committing" in parsed.events[0].text
    assert parsed.events[2].text == "(no output)" and parsed.events[3].text == "Noted, thanks."
