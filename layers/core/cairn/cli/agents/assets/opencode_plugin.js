// Cairn for OpenCode, written by `cairn install-hooks --agent opencode` (re-running it rewrites this file;
// `cairn uninstall --agent opencode` removes it). OpenCode loads every plugin/*.js of its config folder.
//
// - Session start: Cairn's context for this project goes into the system prompt of the session's model calls.
// - Each prompt: the few memories that bear on it join the system prompt for that turn.
// - Idle and compaction: the session's finished messages are appended to a JSON-lines transcript
//   (one {"info", "parts"} record per message, as OpenCode's own API returns them) and handed to Cairn's
//   capture hook, which uploads the new lines in the background, as for every other agent.
//
// The hooks are Cairn's own Python commands (the interpreter below), the same ones Claude Code runs: they
// fail open (no server, no context) and return within 3 s. Nothing here throws into OpenCode.
import { spawnSync } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

const PYTHON = __CAIRN_PYTHON__
const AGENT = "opencode"
const TIMEOUT_MS = 5000

function hook(module, event, payload) {
  try {
    const run = spawnSync(PYTHON, ["-m", module, event, "--agent", AGENT], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      env: process.env,
    })
    return run.status === 0 ? (run.stdout || "").trim() : ""
  } catch {
    return ""
  }
}

function transcriptPath(sessionID) {
  const data = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share")
  return join(data, "opencode", "cairn", `${sessionID}.jsonl`)
}

// the ids already written, so each message is appended once, whole, in order
function written(path) {
  const ids = new Set()
  if (!existsSync(path)) return ids
  for (const line of readFileSync(path, "utf8").split("\n")) {
    try {
      const id = JSON.parse(line)?.info?.id
      if (id) ids.add(id)
    } catch {}
  }
  return ids
}

function finished(message) {
  const info = message?.info || {}
  return info.role === "user" || Boolean(info.time?.completed) || Boolean(info.error)
}

export const CairnPlugin = async ({ client, directory }) => {
  const started = new Map() // sessionID -> session-start context
  const prompts = new Map() // sessionID -> memories for the latest prompt

  async function capture(sessionID, event) {
    try {
      const answer = await client.session.messages({ path: { id: sessionID } })
      const messages = Array.isArray(answer?.data) ? answer.data : []
      const path = transcriptPath(sessionID)
      mkdirSync(join(path, ".."), { recursive: true })
      const seen = written(path)
      let lines = seen.size === 0 && !existsSync(path) ? JSON.stringify({ type: "session", id: sessionID, directory }) + "\n" : ""
      for (const message of messages) {
        if (!finished(message)) break // a message still being written waits for the next idle
        if (!seen.has(message.info.id)) lines += JSON.stringify(message) + "\n"
      }
      if (!lines) return
      appendFileSync(path, lines)
      hook("cairn.capture.hook", event, { session_id: sessionID, transcript_path: path, cwd: directory, hook_event_name: event })
    } catch {}
  }

  return {
    "chat.message": async (input, output) => {
      const text = (output?.parts || [])
        .filter((p) => p.type === "text" && !p.synthetic && !p.ignored)
        .map((p) => p.text)
        .join("\n")
        .trim()
      if (!text || !input?.sessionID) return
      prompts.set(input.sessionID, hook("cairn.cli.hooks_context", "user-prompt", { session_id: input.sessionID, cwd: directory, prompt: text }))
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input?.sessionID
      if (!id || !Array.isArray(output?.system)) return
      if (!started.has(id)) {
        started.set(id, hook("cairn.cli.hooks_context", "session-start", { session_id: id, cwd: directory, source: "startup" }))
      }
      for (const text of [started.get(id), prompts.get(id)]) if (text) output.system.push(text)
    },
    event: async ({ event }) => {
      const id = event?.properties?.sessionID
      if (!id) return
      if (event.type === "session.idle") await capture(id, "stop")
      else if (event.type === "session.compacted") await capture(id, "pre-compact")
    },
  }
}
