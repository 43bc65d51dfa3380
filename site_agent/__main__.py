"""Allow ``python -m site_agent``."""

from site_agent.cli import main

main()
