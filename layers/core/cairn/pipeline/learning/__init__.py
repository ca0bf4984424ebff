"""Learning from a session: the chunk extractors (rules, LLM) behind the Extractor port, and the
session-level learners (signals, project manifests, procedures, errors and their fixes).

Everything here turns what `pipeline.reading` read into memory candidates; nothing here stores them.
"""
