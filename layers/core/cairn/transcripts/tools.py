"""Each agent's tool names, by what the tool does: the one list every reader of a transcript asks.

Names are compared lower-cased (Claude Code `Bash` and OpenCode `bash` are one tool). A tool an agent
adds is added here, under its agent, and every reader (shell calls, edits, manifests read, the todo
list, plans; the trust gate's reading of what a tool returned) knows it at once.
"""

from __future__ import annotations

SHELL, EDIT, READ, TODO, PLAN = "shell", "edit", "read", "todo", "plan"
# tools by which the agent puts a question to the person: their result is what the person chose or typed
ASK = "ask"
# tools whose result is the agent's own work, not someone else's text: a sub-agent's report, the task
# list's bookkeeping, a background command's output (`OWN_TOOLS` adds the ASK tools: the person's answer)
OWN = "own"

AGENT_TOOLS: dict[str, dict[str, frozenset[str]]] = {
    "claude-code": {
        SHELL: frozenset({"bash"}),
        EDIT: frozenset({"edit", "multiedit", "write", "notebookedit"}),
        READ: frozenset({"read"}),
        TODO: frozenset({"todowrite"}),
        PLAN: frozenset({"exitplanmode"}),  # the plan the user approved
        ASK: frozenset({"askuserquestion"}),
        OWN: frozenset(
            {"task", "agent", "taskcreate", "taskupdate", "tasklist", "taskget", "taskoutput", "taskstop"}
            | {"bashoutput", "killshell", "killbash", "toolsearch"}
            | {"task-notification"}  # the harness's notice that a background command ended
        ),
    },
    "codex": {
        SHELL: frozenset({"shell", "exec_command", "local_shell", "shell_command", "container.exec"}),
        EDIT: frozenset({"apply_patch"}),
        TODO: frozenset({"update_plan"}),  # Codex's plan is its todo list: steps with a status
        ASK: frozenset({"request_user_input"}),
        OWN: frozenset({"write_stdin", "spawn_agent", "wait", "tool_search_call"}),
    },
    "gemini-cli": {
        SHELL: frozenset({"run_shell_command"}),
        EDIT: frozenset({"replace", "write_file"}),
        READ: frozenset({"read_file"}),
    },
    "copilot-cli": {
        SHELL: frozenset({"bash"}),
        EDIT: frozenset({"edit", "create"}),  # `create`: a new file ({"path", "file_text"})
        READ: frozenset({"view"}),
        ASK: frozenset({"ask_user"}),
    },
    "cursor": {SHELL: frozenset({"run_terminal_cmd"}), READ: frozenset({"read_file"})},
    "opencode": {
        SHELL: frozenset({"bash"}),
        EDIT: frozenset({"edit", "write", "apply_patch"}),  # `apply_patch` ({"patchText"}) with GPT models
        READ: frozenset({"read"}),
        TODO: frozenset({"todowrite"}),
        ASK: frozenset({"question"}),
        OWN: frozenset({"task"}),
    },
    # other agents' and the model APIs' own tools (Anthropic's text editor tool, Cline's shell)
    "other": {
        SHELL: frozenset({"terminal", "execute_command"}),
        EDIT: frozenset({"str_replace_based_edit_tool"}),
        READ: frozenset({"open", "cat", "readfile"}),
    },
}


def tools_that(does: str) -> frozenset[str]:
    """Every agent's names for the tools that do `does` (SHELL, EDIT, READ, TODO, PLAN, ASK or OWN)."""
    return frozenset().union(*(tools.get(does, frozenset()) for tools in AGENT_TOOLS.values()))


SHELL_TOOLS = tools_that(SHELL)
EDIT_TOOLS = tools_that(EDIT)
READ_TOOLS = tools_that(READ)
TODO_TOOLS = tools_that(TODO)
PLAN_TOOLS = tools_that(PLAN)
ASK_TOOLS = tools_that(ASK)
OWN_TOOLS = tools_that(OWN) | ASK_TOOLS  # the person's answer is no one else's text either
