"""The explore page in a real headless browser (playwright + the distribution's Chromium).

Starts the server on a free port, loads the page, changes the sampler and a parameter, waits
for each redraw, checks the yield text and the number of drawn courses, types a bad value and
sees the library's error next to the control, steps one env's course, exports JSON and PNG,
and saves a screenshot (``docs/images/explore.png`` when ``TRACK_GEN_WRITE_DOCS_IMAGES=1``).

Skipped, with the reason, when playwright or a Chromium binary is missing. The browser is
``$TRACK_GEN_CHROMIUM``, else ``/usr/bin/chromium`` (Debian's ``apt-get install chromium``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from track_gen.explore import Settings
from track_gen.viz import describe_fail_mask

from . import WAIT, Served

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TRACK_GEN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TRACK_GEN_CHROMIUM)"
        )
    with playwright_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Exception as exc:  # a browser that does not start is an environment issue
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {exc}")
        yield b
        b.close()


def _draws(page) -> int:
    return int(page.evaluate("Number(document.body.dataset.draws || 0)"))


def _wait_redraw(page, before: int) -> None:
    page.wait_for_function("n => Number(document.body.dataset.draws || 0) > n", arg=before)
    page.wait_for_function("document.body.dataset.busy !== '1'")


def _yield_text(state) -> str:
    r = state.generator.result
    valid, E = int(r.valid.numpy().sum()), state.generator.num_envs
    return f"yield {100 * valid / E:.1f}% ({valid}/{E} valid)"


def test_page_drives_the_generator(browser, tmp_path):
    # seed 336: one env of the polar batch below is invalid (drawn red, named by fail bits)
    served = Served(Settings(config={"generator": "bezier", "num_envs": 16}, seed=336))
    state = served.state
    context = browser.new_context(viewport={"width": 1280, "height": 960}, accept_downloads=True)
    context.set_default_timeout(WAIT * 1e3)  # ms: every wait ends on its event, a hang on this
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        t0 = time.perf_counter()
        page.goto(served.url)
        # the first draw, or the page's own failure text (a script error ends the wait at once)
        page.wait_for_function(
            "Number(document.body.dataset.draws || 0) >= 1"
            " || document.getElementById('status').textContent.startsWith('server unreachable')"
        )
        assert _draws(page) >= 1, page.text_content("#status")
        first_draw = time.perf_counter() - t0
        assert page.get_attribute("#grid", "data-drawn") == "16"
        assert page.text_content("#yield") == _yield_text(state)

        # the sampler: a rebuild, the new pipeline's controls
        builds = state.builds
        n = _draws(page)
        page.select_option("#sampler", "polar")
        _wait_redraw(page, n)
        assert state.generator.config.generator == "polar" and state.builds == builds + 1
        names = page.eval_on_selector_all(".param", "els => els.map(e => e.dataset.name)")
        assert names == list(state.generator.params)

        # a dynamic parameter: no rebuild, the value reaches every env
        gen, builds = state.generator, state.builds
        box = '.param[data-name="polar.radial_jitter"] .num'
        n = _draws(page)
        t1 = time.perf_counter()
        page.fill(box, "0.75")
        page.press(box, "Enter")
        _wait_redraw(page, n)
        change = time.perf_counter() - t1
        assert state.generator is gen and state.builds == builds
        assert gen.params["polar.radial_jitter"].numpy().tolist() == [0.75] * 16
        assert page.get_attribute("#grid", "data-drawn") == "16"
        assert page.text_content("#yield") == _yield_text(state)
        fail = gen.result.fail_mask.numpy()
        summary = page.text_content("#summary")
        for e in np.flatnonzero(fail):
            assert f"env {e}: {describe_fail_mask(int(fail[e]))}" in summary
        assert re.fullmatch(r"yield \d+\.\d% \(\d+/16 valid\)", page.text_content("#yield"))

        # a bad value: the library's message next to the control, nothing changed
        page.fill(box, "5")
        page.press(box, "Enter")
        err = '.param[data-name="polar.radial_jitter"] .err'
        page.wait_for_function(f"document.querySelector('{err}').textContent.length > 0")
        try:
            gen.params["polar.radial_jitter"] = 5
        except ValueError as exc:
            assert page.text_content(err) == str(exc)
        assert gen.params["polar.radial_jitter"].numpy()[0] == pytest.approx(0.75)

        # a click on a valid course (4 x 4 cells): that env's next course
        e = int(np.flatnonzero(fail == 0)[-1])
        cell = page.eval_on_selector("#grid", "c => c.getBoundingClientRect().width") / 4
        n = _draws(page)
        page.click("#grid", position={"x": (e % 4 + 0.5) * cell, "y": (e // 4 + 0.5) * cell})
        _wait_redraw(page, n)
        assert state.generator.result.generation.numpy().tolist() == np.eye(16)[e].tolist()
        assert ("invalid: env" in page.text_content("#summary")) == bool(fail.any())

        # exports: JSON (the settings), PNG (the canvas)
        with page.expect_download() as dl:
            page.click("#export-json")
        doc = json.loads(Path(dl.value.path()).read_text())
        assert doc["config"]["generator"] == "polar"
        assert doc["config"]["polar_radial_jitter"] == 0.75
        with page.expect_download() as dl:
            page.click("#export-png")
        assert Path(dl.value.path()).read_bytes()[:8] == PNG_SIGNATURE

        page.evaluate("document.getElementById('export-text').hidden = true")
        if os.environ.get("TRACK_GEN_WRITE_DOCS_IMAGES") == "1":
            shot = REPO / "docs" / "images" / "explore.png"
        else:
            shot = tmp_path / "explore.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == PNG_SIGNATURE
        assert errors == []
        print(f"page load to first drawn batch {first_draw * 1e3:.0f} ms; "
              f"parameter change to redraw {change * 1e3:.0f} ms")  # fmt: skip
    finally:
        context.close()
        served.close()
