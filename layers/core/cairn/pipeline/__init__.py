"""The learning pipeline: parse → chunk → extract → consolidate → reflect, as pure stages over the ports.

The same stage functions run inline in a background thread locally (`running.inline`) and
as Step Functions task Lambdas in AWS (`functions/pipeline/handler.py`). Stages pass object keys, not
data: every intermediate result is a JSON blob under the session's prefix, which also makes each stage
idempotent (work whose output exists is skipped).
"""
