// ai-memory for OpenCode (verified against opencode-ai 1.18.33 by the real-agent suite).
// Installed by `ai-memory install-hooks --agent opencode`; removed by `uninstall-hooks`.
//
// OpenCode has no command hooks, only in-process plugins: this one turns OpenCode's plugin
// hooks and bus events into Claude-Code-shaped hook payloads and pipes each into the shell hook
// client (`ai-memory-hook ... opencode EVENT`), which spools it first thing.
//
//   session.created event (or first sight)  -> SessionStart   (source startup | resume)
//   chat.message hook (awaited)             -> UserPromptSubmit (prompt)
//   tool.execute.after hook                 -> PostToolUse    (tool_name, tool_input, tool_response)
//   message.part.updated, tool state=error  -> PostToolUseFailure (error)
//   experimental.session.compacting hook    -> PreCompact
//   session.idle event                      -> Stop           (last_assistant_message)
//   session.deleted event / dispose hook    -> SessionEnd     (reason deleted | exit)
//
// SessionStart's and UserPromptSubmit's stdout ({"hookSpecificOutput":{"additionalContext"}})
// reach the model: the briefing as one more system block (experimental.chat.system.transform,
// every main request of that session), the recall as a synthetic text part of the user's
// message (chat.message), which OpenCode stores with the message and its UI does not show.
//
// Rules OpenCode imposes: every export of this module must be a plugin function (any other
// export, even a string, makes OpenCode reject the whole file), and `event` handlers are called
// without being awaited; only the named hooks (chat.message, *.transform, tool.execute.*) and
// `dispose` are awaited. `opencode run` exits right after the session goes idle, so the Stop
// and SessionEnd children are awaited (until their stdin is written) in `dispose`.

import { spawn } from "node:child_process"

// The hook client; " opencode EVENT" is appended, or "{event}" in it is replaced by EVENT.
const HOOK_CMD = __AI_MEMORY_HOOK_COMMAND__ // written by ai-memory install-hooks
const MCP_SERVER = "ai-memory" // our MCP server's key in opencode.json "mcp": its tools are "ai-memory_<tool>"
const CONTEXT_WAIT_MS = 1500 // SessionStart / UserPromptSubmit: their stdout is waited for this long
const FLUSH_WAIT_MS = 3000 // dispose: how long capture children may still take to get their stdin
// System prompts of OpenCode's hidden agents (title, compaction, summary): no briefing there.
const HIDDEN_AGENT_PROMPTS = ["You are a title generator", "You are a context summarization agent",
  "Summarize what was done in this conversation"]

function commandFor(event) {
  return HOOK_CMD.includes("{event}") ? HOOK_CMD.split("{event}").join(event) : `${HOOK_CMD} opencode ${event}`
}

// One hook run: the payload on stdin. With `wantOutput`, resolves to its stdout (or "" when it
// takes longer than CONTEXT_WAIT_MS: it is killed then, having spooled the event first thing);
// else resolves once its stdin is written, leaving it to finish on its own (its own process
// group, unref'd: neither waited for nor killed when OpenCode exits).
function runHook(event, payload, wantOutput, cwd) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn("/bin/sh", ["-c", commandFor(event)], {
        cwd: cwd || undefined,
        detached: true,
        stdio: ["pipe", wantOutput ? "pipe" : "ignore", "ignore"],
      })
    } catch {
      resolve("")
      return
    }
    let out = ""
    let settled = false
    let timer
    const settle = (value) => {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      resolve(value)
    }
    child.on("error", () => settle(""))
    if (wantOutput) {
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk) => { out += chunk })
      child.on("close", () => settle(out))
      timer = setTimeout(() => {
        try { process.kill(-child.pid, "SIGKILL") } catch { try { child.kill("SIGKILL") } catch {} }
        settle("")
      }, CONTEXT_WAIT_MS)
    }
    child.stdin.on("error", () => settle(""))
    child.stdin.end(JSON.stringify(payload) + "\n", () => { if (!wantOutput) settle("") })
    child.unref()
  })
}

function additionalContext(stdout) {
  const text = String(stdout || "").trim()
  if (!text) return ""
  try {
    const ctx = JSON.parse(text)?.hookSpecificOutput?.additionalContext
    return typeof ctx === "string" ? ctx.trim() : ""
  } catch {
    return ""
  }
}

// A part id in OpenCode's ascending form (prt_ + 12 hex of time*4096+n + 14 base62), so the
// part sorts after the prompt's own text part.
let partCounter = 0
function partID() {
  const hex = (BigInt(Date.now()) * 4096n + BigInt(++partCounter % 4096)).toString(16).padStart(12, "0").slice(-12)
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  let rand = ""
  for (let i = 0; i < 14; i++) rand += alphabet[Math.floor(Math.random() * alphabet.length)]
  return `prt_${hex}${rand}`
}

// A long-lived OpenCode (`opencode serve`) sees messages without end: what is kept per message or
// call is bounded, the oldest forgotten first.
const KEPT = 5000
function remember(map, key, value) {
  map.set(key, value)
  if (map.size > KEPT) map.delete(map.keys().next().value)
}

// Memory must never break the agent: a hook that throws is a hook that did nothing.
function guarded(hooks) {
  return Object.fromEntries(Object.entries(hooks).map(([name, fn]) => [name, async (...args) => {
    try {
      return await fn(...args)
    } catch {
      return undefined
    }
  }]))
}

export const AiMemory = async ({ directory, worktree }) => {
  const sessions = new Map() // root session id -> state
  const parents = new Map() // subagent (child) session id -> its root session id
  const roles = new Map() // message id -> "user" | "assistant"
  const failedCalls = new Map() // call ids already reported as failed (a part is updated more than once)
  const pending = new Set() // capture runs whose stdin is not written yet

  const rootOf = (id) => {
    let seen = 0
    while (parents.has(id) && seen++ < 16) id = parents.get(id)
    return id
  }

  function capture(event, payload, cwd) {
    const run = runHook(event, payload, false, cwd)
    pending.add(run)
    run.finally(() => pending.delete(run))
    return run
  }

  function base(st, event) {
    return { hook_event_name: event, session_id: st.id, cwd: st.cwd }
  }

  // First sight of a root session: SessionStart runs now, its briefing is kept for the
  // system transform; chat.message waits for it before the prompt goes on.
  function sessionFor(id, source, cwd) {
    let st = sessions.get(id)
    if (st) return st
    st = { id, cwd: cwd || directory || worktree, briefing: "", lastText: "", turnOpen: false, ended: false }
    sessions.set(id, st)
    st.started = runHook("SessionStart", { ...base(st, "SessionStart"), source }, true, st.cwd)
      .then((out) => { st.briefing = additionalContext(out) })
    return st
  }

  function stop(st) {
    if (!st.turnOpen) return
    st.turnOpen = false
    capture("Stop", { ...base(st, "Stop"), stop_hook_active: false, last_assistant_message: st.lastText }, st.cwd)
  }

  function end(st, reason) {
    if (st.ended) return
    st.ended = true
    capture("SessionEnd", { ...base(st, "SessionEnd"), reason }, st.cwd)
  }

  return guarded({
    event: async ({ event }) => {
      const p = event?.properties || {}
      switch (event?.type) {
        case "session.created": {
          const info = p.info || {}
          if (info.parentID) remember(parents, info.id, info.parentID)
          else if (info.id) sessionFor(info.id, "startup", info.directory)
          break
        }
        case "message.updated":
          if (p.info?.id) remember(roles, p.info.id, p.info.role)
          break
        case "message.part.updated": {
          const part = p.part || {}
          const st = sessions.get(part.sessionID)
          if (st && part.type === "text" && !part.synthetic && part.time?.end && roles.get(part.messageID) === "assistant") {
            st.lastText = part.text || ""
          }
          if (part.type === "tool" && part.state?.status === "error" && !failedCalls.has(part.callID)) {
            remember(failedCalls, part.callID, true)
            const root = sessions.get(rootOf(part.sessionID))
            if (root) {
              capture("PostToolUseFailure", {
                ...base(root, "PostToolUseFailure"), tool_name: part.tool, tool_input: part.state.input || {},
                tool_use_id: part.callID, error: part.state.error,
                ...(part.sessionID !== root.id ? { subagent_session_id: part.sessionID } : {}),
              }, root.cwd)
            }
          }
          break
        }
        case "session.idle": {
          const st = sessions.get(p.sessionID)
          if (st) stop(st)
          break
        }
        case "session.deleted": {
          const st = sessions.get(p.info?.id || p.sessionID)
          if (st) {
            end(st, "deleted")
            sessions.delete(st.id)
          }
          break
        }
      }
    },

    "chat.message": async (input, output) => {
      const id = input.sessionID
      if (parents.has(id)) return // a subagent's prompt, written by the model
      const st = sessionFor(id, "resume")
      await st.started
      st.turnOpen = true
      st.lastText = ""
      if (!Array.isArray(output?.parts)) return
      const prompt = output.parts.filter((x) => x.type === "text" && !x.synthetic).map((x) => x.text).join("\n")
      const out = await runHook("UserPromptSubmit", { ...base(st, "UserPromptSubmit"), prompt }, true, st.cwd)
      const ctx = additionalContext(out)
      if (ctx && output.message?.id) {
        output.parts.push({ id: partID(), sessionID: id, messageID: output.message.id, type: "text", text: ctx, synthetic: true })
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      const st = sessions.get(input.sessionID)
      if (!st) return
      await st.started
      const first = String(output.system?.[0] || "")
      if (!st.briefing || !Array.isArray(output.system) || HIDDEN_AGENT_PROMPTS.some((p) => first.startsWith(p))) return
      output.system.push(st.briefing)
    },

    "tool.execute.after": async (input, output) => {
      const root = sessions.get(rootOf(input.sessionID))
      if (!root) return
      const payload = { ...base(root, "PostToolUse"), tool_name: input.tool, tool_input: input.args || {}, tool_use_id: input.callID }
      if (typeof output?.output === "string") { // a built-in tool: {title, output, metadata}
        const metadata = { ...(output.metadata || {}) }
        delete metadata.output // bash repeats its output there
        Object.assign(payload, { tool_response: output.output, tool_title: output.title, tool_metadata: metadata })
      } else if (Array.isArray(output?.content)) { // an MCP tool ("<server>_<tool>"): the MCP result as it came
        payload.tool_response = output.content.map((c) => (c?.type === "text" ? c.text : `[${c?.type}]`)).join("\n")
        if (output.isError) payload.error = payload.tool_response
        if (String(input.tool).startsWith(MCP_SERVER + "_")) {
          payload.mcp_context = { server_name: MCP_SERVER, tool_name: input.tool.slice(MCP_SERVER.length + 1) }
        }
      } else {
        payload.tool_response = output ?? null
      }
      if (input.sessionID !== root.id) payload.subagent_session_id = input.sessionID
      capture("PostToolUse", payload, root.cwd) // not awaited: the tool's result goes on to the model at once
    },

    "experimental.session.compacting": async (input) => {
      const st = sessions.get(input.sessionID)
      if (st) capture("PreCompact", { ...base(st, "PreCompact"), trigger: "auto" }, st.cwd)
    },

    dispose: async () => {
      for (const st of sessions.values()) {
        stop(st)
        end(st, "exit")
      }
      const all = Promise.allSettled([...pending])
      await Promise.race([all, new Promise((r) => setTimeout(r, FLUSH_WAIT_MS))])
    },
  })
}
