"""Remembering: turn candidates into stored memories — consolidation (dedup, merge, supersede, promote),
contradictions, transcript excerpts, the session's reflection and the handoff text.
"""
