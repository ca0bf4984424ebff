"""Domain errors, mapped to HTTP statuses and JSON-RPC errors by type in one place (the API layer)."""


class CairnError(Exception):
    """Base of every error Cairn raises on purpose; `code` is a stable machine-readable name."""

    code = "error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(CairnError):
    code = "invalid_input"


class NotFound(CairnError):
    code = "not_found"


class Unauthenticated(CairnError):
    code = "unauthenticated"


class Forbidden(CairnError):
    code = "forbidden"


class OutsideProjects(Forbidden):
    """A request names a project its key is not limited to (reads and writes alike)."""

    code = "outside_projects"


class Conflict(CairnError):
    code = "conflict"


class PayloadTooLarge(CairnError):
    code = "payload_too_large"


class Unavailable(CairnError):
    """A dependency (search engine, blob store, LLM) is down; callers may degrade."""

    code = "unavailable"
