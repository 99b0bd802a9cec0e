"""The HTML report in a real headless browser (Chromium from the OS packages; `apt-get install chromium`):
no console errors, no network requests, the topology picture visible, and hostile machine strings inert
-- with the page's Content Security Policy and, to prove the escaping alone holds, without it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import report_samples as rs
from browser import Browser, find_chromium

from topoaudit.examples import examples
from topoaudit.render import render
from topoaudit.render.common import summary

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium not installed (apt-get install -y chromium, or set TOPOAUDIT_CHROMIUM=/path/to/chrome)",
)
EXAMPLES = Path(__file__).parents[1] / "reports" / "examples"

PICTURE = """(() => {
  const svg = document.querySelector('#topology-picture svg');
  if (!svg) return null;
  const r = svg.getBoundingClientRect();
  const s = getComputedStyle(svg);
  return {width: r.width, height: r.height, visible: s.display !== 'none' && s.visibility !== 'hidden',
          gpus: svg.querySelectorAll('g.gpu').length, inViewportX: r.left >= 0 && r.right <= innerWidth + 1};
})()"""
ACTIVE = "document.querySelectorAll('script, img, iframe, object, embed, link, form, [onerror], [onload]').length"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    b = Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


def _check_clean(load: object) -> None:
    assert load.console_errors == [], load.console_errors  # type: ignore[attr-defined]
    assert load.requests == [], load.requests  # type: ignore[attr-defined]
    assert load.dialogs == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(examples()))
def test_example_report_renders_cleanly_with_the_picture_visible(browser: Browser, name: str) -> None:
    page = EXAMPLES / name / "report.html"
    load = browser.load(page.as_uri())
    _check_clean(load)
    picture = browser.evaluate(PICTURE)
    assert picture is not None and picture["visible"]
    assert picture["width"] > 300 and picture["height"] > 100
    assert picture["gpus"] == 8
    assert picture["inViewportX"]  # scaled to the page, not cut off
    assert browser.evaluate(ACTIVE) == 0
    shown = browser.evaluate("document.querySelector('#summary').innerText")
    assert shown.strip() == summary(rs.example_report(name))  # the sentence, as the report states it


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_hostile_strings_stay_inert(browser: Browser, tmp_path: Path, csp: bool) -> None:
    html = render(rs.hostile_report(), "html")
    if not csp:
        html = "\n".join(line for line in html.splitlines() if "Content-Security-Policy" not in line)
        assert "Content-Security-Policy" not in html
    page = tmp_path / "hostile.html"
    page.write_text(html, encoding="utf-8")
    load = browser.load(page.as_uri())
    _check_clean(load)
    assert browser.evaluate(ACTIVE) == 0
    shown = browser.evaluate("document.body.innerText")
    assert "<script>alert('x')</script>" in shown  # the reader sees the hostile text as text
    assert browser.evaluate("document.title").startswith("topoaudit FAIL: <script>")


def test_screenshot_and_print(browser: Browser, tmp_path: Path) -> None:
    """The page paints and prints (the PNG is kept under $TOPOAUDIT_SCREENSHOTS when set, for a look)."""
    import dataclasses

    report = dataclasses.replace(rs.identity_report(), bench=rs.bench_result())
    page = tmp_path / "bench.html"
    page.write_text(render(report, "html"), encoding="utf-8")
    load = browser.load(page.as_uri())
    _check_clean(load)
    assert browser.evaluate("document.querySelectorAll('svg.plot').length") == 2
    png = browser.screenshot(1280, 4200)
    assert png.startswith(b"\x89PNG") and len(png) > 20_000
    pdf = browser.pdf()
    assert pdf.startswith(b"%PDF")
    keep = os.environ.get("TOPOAUDIT_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "bench-report.png").write_bytes(png)
        (Path(keep) / "bench-report.pdf").write_bytes(pdf)


def test_the_harness_sees_scripts_errors_and_requests(browser: Browser, tmp_path: Path) -> None:
    """The checks above are not vacuous: a page that does misbehave is caught on every count."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body>"
        "<img src='http://127.0.0.1:9/x.png'><script>console.error('boom'); window.__ran = 1;</script>"
        "</body></html>",
        encoding="utf-8",
    )
    load = browser.load(page.as_uri())
    assert any("boom" in e for e in load.console_errors)
    assert "http://127.0.0.1:9/x.png" in load.requests
    assert browser.evaluate("window.__ran") == 1
    assert browser.evaluate(ACTIVE) == 2
