"""HTTP surface: the FastAPI app factory, REST routes, auth and the one error map."""
