"""to_html: the page's content, and the page itself driven in headless Chromium.

The browser tests need the ``playwright`` Python package and a Chromium at
/usr/bin/chromium (Debian: ``apt-get install chromium``); Playwright's own browser download
is never used. Without them those tests are skipped, saying what is missing; under
CHAINGRAD_NO_SKIPS=1 (as on CI) a skip fails the run (conftest.py), so that a broken
browser setup cannot pass unnoticed.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chaingrad import Value
from chaingrad.show.dot import format_number, node_names, reading_order
from chaingrad.show.explain import backward_steps
from chaingrad.show.page import to_html

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def neuron() -> Value:
    x1, w1 = Value(2.0, label="x1"), Value(-3.0, label="w1")
    x2, w2 = Value(0.0, label="x2"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    return (x1 * w1 + x2 * w2 + b).tanh()


def mixed() -> Value:
    """Reuse (x used four times), a constant, a power, a division and several methods."""
    x, y = Value(0.7, label="x"), Value(-1.3, label="y")
    return (x * x + (x * y).sigmoid() - y / x + (x**2).exp().log()).tanh() * 2


def wide() -> Value:
    """Numbers whose texts are wider than the fields' least width, in data and in grads."""
    x, w = Value(123456.789, label="x"), Value(-1.234e-7, label="w")
    return (x * w * x).tanh() * x * x


GRAPHS = {"neuron": neuron, "mixed": mixed}
MONOSPACE_12PX = 7.22  # the advance of a 12px DejaVu Sans Mono character, the widest usual


class PageParser(HTMLParser):
    """Collects the value groups, every URL-bearing attribute and the embedded JSON."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, dict[str, str]] = {}
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.json_text = ""
        self._in_json = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if attrs.get("class") == "value":
            self.values[attrs["id"]] = attrs
        self.urls += [v for k, v in attrs.items() if k in ("src", "href", "xlink:href") and v]
        self._in_json = attrs.get("id") == "chaingrad-data"

    def handle_data(self, data):
        if self._in_json:
            self.json_text += data

    def handle_endtag(self, tag):
        self._in_json = False


def parse(path: str) -> PageParser:
    parser = PageParser()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return parser


def expected_grads(root: Value, after_steps: int) -> dict[str, float]:
    """Each node's gradient after ``after_steps`` _backward calls, by page id (n0, n1, ...)."""
    order = reading_order(root)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    grads = {ids[id(node)]: 0.0 for node in order}
    grads[ids[id(root)]] = 1.0
    for step in backward_steps(root, accumulate=False)[:after_steps]:
        for update in step.updates:
            grads[ids[id(update.input)]] = update.after
    return grads


# ---- the page's content ----


@pytest.mark.parametrize("name", GRAPHS)
def test_page_holds_every_value_and_the_real_steps(tmp_path, name):
    root = GRAPHS[name]()
    order = reading_order(root)
    before = [node.grad for node in order]
    path = to_html(root, str(tmp_path / "page.html"))
    assert [node.grad for node in order] == before  # to_html does not run a real backward
    page = parse(path)
    names = node_names(order)
    assert [v["data-name"] for v in page.values.values()] == [names[id(n)] for n in order]
    assert {k: float(v["data-grad"]) for k, v in page.values.items()} == expected_grads(root, 0)
    assert [float(v["data-data"]) for v in page.values.values()] == [n.data for n in order]
    payload = json.loads(page.json_text)
    steps = backward_steps(root, accumulate=False)
    assert len(payload["steps"]) == len(steps)
    for shown, step in zip(payload["steps"], steps, strict=True):
        assert [u["after"] for u in shown["updates"]] == [u.after for u in step.updates]
        assert [u["text"] for u in shown["updates"]] == [u.text(step.op) for u in step.updates]


def test_page_is_self_contained(tmp_path):
    page = parse(to_html(neuron(), str(tmp_path / "page.html")))
    assert page.urls == []
    assert "link" not in page.tags and "iframe" not in page.tags and "img" not in page.tags
    text = (tmp_path / "page.html").read_text()
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)  # only the SVG namespace
    assert "fetch(" not in text and "XMLHttpRequest" not in text and "import(" not in text


def test_labels_cannot_inject_markup(tmp_path):
    x = Value(1.0, label="</script><script>alert(1)</script>")
    path = to_html(x * 2, str(tmp_path / "page.html"), title="<b>t</b>")
    text = Path(path).read_text()
    assert "<script>alert" not in text and "<b>t</b>" not in text
    assert len(parse(path).values) == 3


def test_to_html_checks_its_input(tmp_path):
    y = Value(1.0)
    for _ in range(30):
        y = y + 1
    with pytest.raises(ValueError, match="to_html: the graph has 61 Values, more than max_nodes"):
        to_html(y, str(tmp_path / "big.html"), max_nodes=60)
    with pytest.raises(TypeError, match="to_html: root must be a Value"):
        to_html(1.0, str(tmp_path / "x.html"))
    assert not any(tmp_path.iterdir())


def field_bounds(svg: str) -> dict[str, tuple[float, float, float]]:
    """Each value box's left edge, its two separators' x and its right edge, by id."""
    bounds = {}
    for match in re.finditer(r'<g class="value" id="(n\d+)".*?<rect x="([\d.]+)" y="[\d.]+" '
                             r'width="([\d.]+)".*?<line x1="([\d.]+)".*?<line x1="([\d.]+)"',
                             svg):
        node, x, width, first, second = match.groups()
        bounds[node] = (float(first), float(second), float(x) + float(width))
    return bounds


@pytest.mark.parametrize("make", [wide, neuron])
def test_fields_fit_every_text_they_will_show(tmp_path, make):
    root = make()
    path = to_html(root, str(tmp_path / "page.html"))
    bounds = field_bounds(Path(path).read_text())
    order = reading_order(root)
    assert len(bounds) == len(order)
    data = [f"data {format_number(node.data)}" for node in order]
    grads = ["grad " + format_number(g) for done in range(len(backward_steps(root)) + 1)
             for g in expected_grads(make(), done).values()]
    first, second, right = bounds["n0"]
    assert MONOSPACE_12PX * max(map(len, data)) + 4 <= second - first
    assert MONOSPACE_12PX * max(map(len, grads)) + 4 <= right - second
    if make is wide:
        assert "grad -246913.5780" in grads and "data -1.2340e-07" in data


# ---- the page in headless Chromium ----


def need_browser(what: str) -> None:
    """Skip for want of ``what`` (under CHAINGRAD_NO_SKIPS=1, as on CI, the skip fails the
    run: see conftest.py)."""
    pytest.skip(f"the browser tests need {what}")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright import sync_api
    except ImportError:
        need_browser("the playwright package: pip install playwright")
    if not os.path.exists(CHROMIUM):
        need_browser(f"Chromium at {CHROMIUM}: apt-get install chromium")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser):
    """Open a page file; records every request and script error for the test to check."""
    opened = []

    def _open(path: str):
        page = browser.new_page()
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(Path(path).as_uri())
        opened.append((page, requests, errors))
        return page

    yield _open
    for page, requests, errors in opened:
        page.close()
        assert errors == []
        assert requests and [url for url in requests if not url.startswith("file://")] == []


def shown_grads(page) -> dict[str, float]:
    pairs = page.eval_on_selector_all(
        "g.value", "els => els.map(e => [e.id, e.getAttribute('data-grad')])")
    return {node_id: float(grad) for node_id, grad in pairs}


@pytest.mark.parametrize("name", GRAPHS)
def test_stepping_shows_the_engines_gradients(tmp_path, open_page, name):
    root = GRAPHS[name]()
    page = open_page(to_html(root, str(tmp_path / "page.html")))
    total = len(backward_steps(root, accumulate=False))
    assert shown_grads(page) == expected_grads(root, 0)
    for done in range(1, total + 1):
        page.click("#step")
        assert page.get_attribute("#status", "data-step") == str(done)
        assert shown_grads(page) == expected_grads(root, done)
        current = backward_steps(root, accumulate=False)[done - 1]
        position = [id(n) for n in reading_order(root)].index(id(current.node))
        assert "current" in page.get_attribute(f"#n{position}", "class")
    assert page.is_disabled("#step")
    engine = GRAPHS[name]()  # the same graph, differentiated by the engine
    engine.backward()
    final = shown_grads(page)
    assert [final[f"n{i}"] for i in range(len(final))] == [
        node.grad for node in reading_order(engine)]
    assert page.text_content("#n0 .grad") == "grad " + format_number(final["n0"])


def test_reset_and_play(tmp_path, open_page):
    root = neuron()
    page = open_page(to_html(root, str(tmp_path / "page.html")))
    total = len(backward_steps(root, accumulate=False))
    page.click("#step")
    page.click("#step")
    page.click("#reset")
    assert page.get_attribute("#status", "data-step") == "0"
    assert shown_grads(page) == expected_grads(root, 0)
    page.evaluate("document.body.setAttribute('data-interval', '20')")  # play faster
    page.click("#play")
    page.wait_for_selector(f'#status[data-step="{total}"]')
    assert shown_grads(page) == expected_grads(root, total)
    assert page.text_content("#play") == "play"
    assert "x1.grad += w1.data * out.grad = -3.0000 * 0.5000" in page.text_content("#log")


def test_fit_to_width_shows_the_whole_graph(tmp_path, open_page):
    page = open_page(to_html(neuron(), str(tmp_path / "page.html")))
    page.set_viewport_size({"width": 800, "height": 600})
    width = "document.querySelector('#graph').getBoundingClientRect().width"
    box = "document.querySelector('#scroll').clientWidth"
    assert page.evaluate(width) > page.evaluate(box)  # wider than the window: it scrolls
    page.click("#fit")
    assert page.evaluate(width) <= page.evaluate(box)
    assert page.text_content("#fit") == "actual size"
    page.click("#step")  # stepping still works on the scaled drawing
    assert page.get_attribute("#status", "data-step") == "1"
    page.click("#fit")
    assert page.evaluate(width) > page.evaluate(box)


OVERFLOWS = """els => els.flatMap(g => {
  const box = g.querySelector("rect").getBBox();
  const [a, b] = [...g.querySelectorAll("line")].map(line => line.x1.baseVal.value);
  const fields = {name: [box.x, a], data: [a, b], grad: [b, box.x + box.width]};
  return [...g.querySelectorAll("text")].filter(text => {
    const r = text.getBBox(), [left, right] = fields[text.getAttribute("class")];
    return r.x < left + 2 || r.x + r.width > right - 2;
  }).map(text => g.id + ": " + text.textContent);
})"""


@pytest.mark.parametrize("make", [wide, mixed])
def test_every_text_fits_its_field_at_every_step(tmp_path, open_page, make):
    root = make()
    page = open_page(to_html(root, str(tmp_path / "page.html")))
    for done in range(len(backward_steps(root, accumulate=False)) + 1):
        if done:
            page.click("#step")
        assert page.eval_on_selector_all("g.value", OVERFLOWS) == [], f"after step {done}"


def test_accumulation_is_shown_and_the_current_node_kept_in_sight(tmp_path, browser):
    a = Value(1.0, label="a")
    b = a + a
    b.label = "b"
    page = browser.new_page(viewport={"width": 900, "height": 700})
    try:
        page.goto(Path(to_html(b * b + b, str(tmp_path / "page.html"))).as_uri())
        log = []
        for _ in range(3):
            page.click("#step")
            log.append(page.text_content("#log .now"))
        # b is used three times: its grad grows 0 -> 1 (the +), then 1 -> 3 -> 5 (b * b)
        assert "(b.grad: 0.0000 -> 1.0000)" in log[0]
        assert "(b.grad: 1.0000 -> 3.0000)" in log[1] and "(b.grad: 3.0000 -> 5.0000)" in log[1]
        assert "(a.grad: 5.0000 -> 10.0000)" in log[2]  # a + a: two updates of a
        wide = to_html(neuron(), str(tmp_path / "wide.html"))  # wider than the window
        page.goto(Path(wide).as_uri())
        inside = ("(id) => { const r = document.getElementById(id).getBoundingClientRect(),"
                  " s = document.getElementById('scroll').getBoundingClientRect();"
                  " return r.left >= s.left && r.right <= s.right; }")
        assert page.evaluate("document.getElementById('graph').getBoundingClientRect().width"
                             " > document.getElementById('scroll').clientWidth")
        root = f"n{len(reading_order(neuron())) - 1}"
        assert page.evaluate(inside, root)  # the seed is shown on the root
        for _ in range(len(backward_steps(neuron(), accumulate=False))):
            page.click("#step")
            current = page.eval_on_selector(".value.current", "e => e.id")
            assert page.evaluate(inside, current)
    finally:
        page.close()
