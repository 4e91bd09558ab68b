"""``python -m app`` is the ``runtime-store`` command."""

from app.cli import main

main()
