"""Transcript capture on the developer's machine: the stop/session-end/pre-compact hooks and their uploads.

The hook itself (`capture.hook`) only records what to upload and starts a detached worker; the worker
(`capture.worker`) cuts the new part of the transcript, redacts secrets, gzips it into a spool dir and
delivers the spool (`capture.queue`) through a presigned upload (`capture.upload`).
"""
