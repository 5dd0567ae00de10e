"""``python -m habitus``."""

from habitus.cli import main

main()
