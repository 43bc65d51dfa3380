"""Allow ``python -m coordinator``."""

from coordinator.cli import main

main()
