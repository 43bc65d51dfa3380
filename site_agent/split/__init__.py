"""Stage 1, split: the gold corpus becomes train / validation / test files.

``by_source`` holds the deterministic, source-grouping split; ``stage`` the pipeline stage.
"""
