"""LocalStack Lambda runtime executor that runs Python handlers as host processes instead of containers.

Enable it in LocalStack's venv with ``LAMBDA_RUNTIME_EXECUTOR=host``. ``worker.py`` is the process that
imports the handler; ``executor.py`` is the LocalStack side that starts it and speaks to it over a pipe.
"""
