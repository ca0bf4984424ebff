"""MCP Lambda entry: the app's /mcp endpoint (Streamable HTTP, stateless) behind API Gateway, via Mangum.

Built at import, once per cold start, and reused by warm invocations; the app carries only /mcp
(the REST and hook routes are functions/api).
"""

from cairn.api.lambda_entry import asgi_handler

app, handler = asgi_handler("cairn-mcp", rest=False, mcp=True)
