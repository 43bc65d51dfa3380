"""The plumbing around the protocol: Flower processes, keys, the Flower CLI, local and remote
runs, ``coordinator.toml``. Nothing here knows what a round does."""
