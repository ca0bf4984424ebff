"""Pure domain: models, errors, ports, identifiers. Imports no I/O library."""
