"""Reading a session: what happened in it — tool calls, shell commands, edits, turns, steps, git state.

Pure functions over the session's events; nothing here writes or learns. Learning and remembering build
on what this package reads.
"""
