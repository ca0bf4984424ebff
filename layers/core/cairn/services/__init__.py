"""Application services over the ports: what Cairn does, independent of where it runs."""
