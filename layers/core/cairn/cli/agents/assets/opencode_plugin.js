// Cairn for OpenCode, written by `cairn install-hooks --agent opencode` (re-running it rewrites this file;
// `cairn uninstall --agent opencode` removes it). OpenCode loads every plugin/*.js of its config folder.
//
// - Session start: Cairn's context for this project goes into the system prompt of the session's model calls.
// - Each prompt: the few memories that bear on it join the system prompt for that turn.
// - Idle and compaction: the session's finished messages are appended to a JSON-lines transcript
//   (one {"info", "parts"} record per message, as OpenCode's own API returns them) and handed to Cairn's
//   capture hook, which uploads the new lines in the background, as for every other agent.
//   The messages are kept from OpenCode's own events as they stream (message.updated, message.part.*), so
//   at idle the lines are written and the hook run synchronously, with no await: `opencode run` exits as
//   soon as its session is idle, and an HTTP round trip to fetch the messages then could lose the session.
//   Only a session this plugin did not see from its start (resumed) is fetched through the API.
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

// messages of each session, as OpenCode's events describe them: sessionID -> messageID -> {info, parts}
function tracker() {
  const sessions = new Map()
  const messageOf = (sessionID, messageID) => {
    if (!sessions.has(sessionID)) sessions.set(sessionID, new Map())
    const messages = sessions.get(sessionID)
    if (!messages.has(messageID)) messages.set(messageID, { info: null, parts: new Map() })
    return messages.get(messageID)
  }
  return {
    see(event) {
      const p = event?.properties || {}
      if (event.type === "message.updated" && p.info?.id && p.info?.sessionID) {
        messageOf(p.info.sessionID, p.info.id).info = p.info
      } else if (event.type === "message.part.updated" && p.part?.id && p.part?.messageID) {
        messageOf(p.part.sessionID || p.sessionID, p.part.messageID).parts.set(p.part.id, p.part)
      } else if (event.type === "message.part.delta" && p.partID && typeof p.delta === "string") {
        const part = messageOf(p.sessionID, p.messageID).parts.get(p.partID)
        if (part && p.field) part[p.field] = (typeof part[p.field] === "string" ? part[p.field] : "") + p.delta
      } else if (event.type === "message.part.removed" && p.partID) {
        sessions.get(p.sessionID)?.get(p.messageID)?.parts.delete(p.partID)
      } else if (event.type === "message.removed" && p.messageID) {
        sessions.get(p.sessionID)?.delete(p.messageID)
      }
    },
    // the session's messages in OpenCode's order (ids sort by time), or null if none was seen
    messages(sessionID) {
      const messages = sessions.get(sessionID)
      if (!messages || messages.size === 0) return null
      const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      return [...messages.values()]
        .filter((m) => m.info)
        .sort((a, b) => byId(a.info, b.info))
        .map((m) => ({ info: m.info, parts: [...m.parts.values()].sort(byId) }))
    },
  }
}

export const CairnPlugin = async ({ client, directory }) => {
  const started = new Map() // sessionID -> session-start context
  const prompts = new Map() // sessionID -> memories for the latest prompt
  const seenEvents = tracker()
  const created = new Set() // sessions created while this plugin ran: the events hold all their messages

  // synchronous on purpose (see the top): file writes and the hook, nothing awaited
  function write(sessionID, event, messages) {
    try {
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

  async function capture(sessionID, event) {
    const known = seenEvents.messages(sessionID)
    const mine = created.has(sessionID)
    // what the events hold is written first, at once; a session begun before this plugin ran (resumed)
    // may hold older messages only the API knows: they follow when there is time (each id written once)
    if (known && (mine || existsSync(transcriptPath(sessionID)))) write(sessionID, event, known)
    if (mine) return
    try {
      const answer = await client.session.messages({ path: { id: sessionID } })
      write(sessionID, event, Array.isArray(answer?.data) ? answer.data : [])
    } catch {
      if (known) write(sessionID, event, known)
    }
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
      try {
        seenEvents.see(event)
        if (event.type === "session.created" && event.properties?.info?.id) created.add(event.properties.info.id)
      } catch {}
      const id = event?.properties?.sessionID
      if (!id) return
      // `opencode run` leaves on session.status idle, which comes just before session.idle: take the first
      const idle = event.type === "session.idle" || (event.type === "session.status" && event.properties?.status?.type === "idle")
      if (idle) await capture(id, "stop")
      else if (event.type === "session.compacted") await capture(id, "pre-compact")
    },
  }
}
