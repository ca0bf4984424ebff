"""Adapters: implementations of the ports."""
