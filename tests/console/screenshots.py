"""The console's run page photographed for the docs: ``docs/console-run.png`` (desktop) and
``docs/console-run-narrow.png`` (420 px wide), from the shaped runs of ``shape_seed``.

Run ``./scripts/console-screenshots`` (or ``python -m tests.console.screenshots [DIR]``):
it serves a fresh SQLite database in open mode on loopback, writes the runs through the
client with times just before now, and drives Debian's Chromium headless, offline.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.storage import upgrade_schema
from runtime_store_client import HttpStore
from tests.api.test_docs_browser import NETWORK_ISOLATION_FLAGS
from tests.conftest import start_server, stop_server
from tests.console.conftest import CHROMIUM, ROOT
from tests.console.shape_seed import seed_shape

#: (file name, viewport width, viewport height, whole page).
SHOTS = (("console-run.png", 1280, 1800, False), ("console-run-narrow.png", 420, 2400, False))


def shoot(browser: Any, url: str, path: Path, width: int, height: int, full: bool) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]", timeout=15_000)
        page.wait_for_selector("body[data-whoami=done]", timeout=15_000)
        page.screenshot(path=str(path), full_page=full)
    finally:
        context.close()


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    target = Path(argv[0]) if argv else ROOT / "docs"
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{Path(directory) / 'screenshots.db'}"
        upgrade_schema(url)
        server = start_server(url, Path(directory) / "server.log")
        try:
            base = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
            with HttpStore(server.base_url) as store:
                shape = seed_shape(store, "", base)
            run_url = f"{server.base_url}/console/run?run_id={shape.current.run_id}"
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM),
                    args=["--no-sandbox", "--disable-gpu", *NETWORK_ISOLATION_FLAGS],
                )
                try:
                    for name, width, height, full in SHOTS:
                        shoot(browser, run_url, target / name, width, height, full)
                        print(target / name)
                finally:
                    browser.close()
        finally:
            stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
