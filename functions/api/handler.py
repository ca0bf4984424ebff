"""API Lambda entry: the REST and hook routes of the FastAPI app behind API Gateway, through Mangum.

Built at import, once per cold start, and reused by warm invocations; /mcp has its own function
(functions/mcp), so this one never imports the MCP SDK.
"""

from cairn.api.lambda_entry import asgi_handler

app, handler = asgi_handler("cairn-api", rest=True, mcp=False)
