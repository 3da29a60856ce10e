"""to_html: the page's content, and the page itself driven in a real Chromium.

The browser tests use the ``browser`` fixture of conftest.py (Playwright driving the
Chromium found on PATH or named by $CHAINGRAD_CHROMIUM; they skip without one, and under
CHAINGRAD_NO_SKIPS=1, as on CI, a skip fails the run). They walk the four graphs of the
README and the issue (the neuron, ``b = a + a; c = b + b``, an MLP(2, [3, 1]) with a
squared loss, a small Tensor graph) at 1280x800 and 800x600 and check at every step that
what the step is about is on screen. They save screenshots; with
CHAINGRAD_SCREENSHOTS=docs/images they remake the README's (the MLP's page is the one the
README's snippet writes, the snippet run as it is written).
"""

from __future__ import annotations

import json
import os
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from chaingrad import Tensor, Value, explain
from chaingrad.errors import RendererNotFoundError
from chaingrad.nn import MLP
from chaingrad.show import page as page_module
from chaingrad.show.names import format_number, node_names, reading_order
from chaingrad.show.page import BOX_PAD, CHAR_W, page_graph, to_html
from chaingrad.show.render import find_renderer
from chaingrad.show.steps import backward_steps

pytestmark = pytest.mark.slow  # a real browser, every step of four graphs at two sizes

README = Path(__file__).parents[2] / "docs" / "backprop.md"  # the page's guide
MONOSPACE_14PX = 8.43  # the advance of a 14px DejaVu Sans Mono character, the widest usual
SIZES = {"1280": (1280, 800), "800": (800, 600)}


# ---- the graphs ----


def mixed() -> Value:
    """Reuse (x used four times), a constant, a power, a division and several methods."""
    x, y = Value(0.7, label="x"), Value(-1.3, label="y")
    return (x * x + (x * y).sigmoid() - y / x + (x**2).exp().log()).tanh() * 2


def wide() -> Value:
    """Numbers whose texts are wider than the fields' least width, in data and in grads."""
    x, w = Value(123456.789, label="x"), Value(-1.234e-7, label="w")
    return (x * w * x).tanh() * x * x


def tensor_reuse() -> Tensor:
    """``b = a + a; c = (b + b).sum()`` on a Tensor ``a`` of three entries: the naive walk
    gets 8 in each entry of a.grad, the right answer is 4."""
    a = Tensor([1.0, 2.0, 3.0], requires_grad=True, label="a")
    b = a + a
    b.label = "b"
    c = (b + b).sum()
    c.label = "c"
    return c


def long_chain() -> Value:
    """x feeds the first and the last op of a chain of 30 tanh: a drawing far wider than
    any window."""
    x = Value(0.5, label="x")
    y = x
    for _ in range(30):
        y = y.tanh()
    return y * x


@pytest.fixture(scope="module")
def graphs(teaching_graphs):
    """name -> make(): a fresh root of one of the four teaching graphs (conftest.py), or
    of ``mixed`` or ``wide``."""
    roots = {name: (lambda make=make: make()[0]) for name, make in teaching_graphs.items()}
    return roots | {"mixed": mixed, "wide": wide}


def readme_snippet() -> str:
    """The code of the README's section "The step-by-step page", which writes loss.html:
    the page of the README's screenshot."""
    readme = README.read_text(encoding="utf-8")
    section = readme.split("## The step-by-step page\n")[1].split("\n## ")[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def run_readme_snippet(folder: Path, monkeypatch) -> dict:
    """The names the README's snippet defines, run as it is written, in ``folder``."""
    monkeypatch.chdir(folder)
    names: dict = {}
    exec(readme_snippet(), names)
    return names


# ---- reading a page ----


class PageParser(HTMLParser):
    """Collects the value groups, every URL-bearing attribute and the embedded JSON."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, dict[str, str]] = {}
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.metas: list[dict[str, str]] = []
        self.json_text = ""
        self._in_json = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "meta":
            self.metas.append(attrs)
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


def payload_of(path: str) -> dict:
    return json.loads(parse(path).json_text)


def expected_grads(root, after_steps: int) -> dict[str, str]:
    """The ``data-grad`` of every node after ``after_steps`` steps of the real backward, by
    page id: floats' reprs for Values, texts for a Tensor."""
    order = reading_order(root)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    tensor = hasattr(root._value, "shape")
    steps = backward_steps(root, accumulate=False)

    def shown(g):
        if not tensor:
            return repr(float(g))
        if g.size == 1:
            return f"grad () = {format_number(g.item())}"
        return f"grad {g.shape}, norm {format_number(float(np.sqrt((g.astype(float) ** 2).sum())))}"

    if tensor:
        grads = {ids[id(n)]: "grad None" if n.requires_grad else "requires_grad=False"
                 for n in order}
    else:
        grads = {ids[id(n)]: repr(0.0) for n in order}
    grads[ids[id(root)]] = shown(np.ones_like(root._value) if tensor else 1.0)
    for step in steps[:after_steps]:
        for update in step.updates:
            grads[ids[id(update.input)]] = shown(update.after)
    return grads


# ---- the page's content ----


@pytest.mark.parametrize("name", ["neuron", "mixed"])
def test_page_holds_every_value_and_the_real_steps(tmp_path, graphs, name):
    root = graphs[name]()
    order = reading_order(root)
    before = [node.grad for node in order]
    path = to_html(root, str(tmp_path / "page.html"))
    assert [node.grad for node in order] == before  # to_html does not run a real backward
    page = parse(path)
    names = node_names(order)
    assert [v["data-name"] for v in page.values.values()] == [names[id(n)] for n in order]
    assert {k: v["data-grad"] for k, v in page.values.items()} == expected_grads(root, 0)
    assert [float(v["data-data"]) for v in page.values.values()] == [n.data for n in order]
    payload = json.loads(page.json_text)
    steps = backward_steps(root, accumulate=False)
    assert len(payload["steps"]) == len(steps)
    for shown, step in zip(payload["steps"], steps, strict=True):
        # the formula exactly as backward_steps and explain give it; the numbers as well
        assert [u["text"] for u in shown["updates"]] == [u.text(step.op) for u in step.updates]
        assert [u["grad"] for u in shown["updates"]] == [
            [repr(u.after), "grad " + format_number(u.after)] for u in step.updates]


def test_the_readme_snippet_writes_the_names_its_screenshot_shows(tmp_path, monkeypatch):
    """x0, x1 and "backward of loss", as in docs/images/page_mlp_1280.png."""
    run_readme_snippet(tmp_path, monkeypatch)
    text = (tmp_path / "loss.html").read_text(encoding="utf-8")
    shown = {v["data-name"] for v in parse(str(tmp_path / "loss.html")).values.values()}
    assert {"x0", "x1", "y", "loss", "0.weight[1, 0]", "2.bias[0]"} <= shown
    assert [name for name in shown if name.startswith("leaf")] == ["leaf1"]  # the -1 of - y
    assert "<title>backward of loss</title>" in text and "<h1>backward of loss</h1>" in text


def test_the_formulas_are_explains(tmp_path, graphs):
    root = graphs["neuron"]()
    text = explain(graphs["neuron"](), file=open(os.devnull, "w"))  # noqa: SIM115
    payload = payload_of(to_html(root, tmp_path / "page.html"))
    for step in payload["steps"]:
        for update in step["updates"]:
            assert update["text"] in text


def test_page_is_self_contained_and_has_a_viewport(tmp_path, graphs):
    page = parse(to_html(graphs["neuron"](), str(tmp_path / "page.html")))
    assert page.urls == []
    assert "link" not in page.tags and "iframe" not in page.tags and "img" not in page.tags
    text = (tmp_path / "page.html").read_text()
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)  # only the SVG namespace
    assert "fetch(" not in text and "XMLHttpRequest" not in text and "import(" not in text
    assert "@import" not in text and not re.search(r"url\((?!#)", text)  # only url(#arrow)
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.metas


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
    with pytest.raises(ValueError, match="to_html: layout must be one of auto, graphviz, "
                       "builtin, got 'dot'"):
        to_html(y, str(tmp_path / "x.html"), layout="dot")
    with pytest.raises(TypeError, match="to_html: params must be a model, a dict of name -> "
                       "parameter, \\(name, parameter\\) pairs or a list of parameters, got "
                       "int"):
        to_html(y, str(tmp_path / "x.html"), params=3)
    assert not any(tmp_path.iterdir())


def test_each_box_is_as_wide_as_its_own_texts(tmp_path, graphs):
    """Not as wide as the widest node's: a name, then the data above the grad."""
    root = graphs["wide"]()
    graph = page_graph(root)
    order = reading_order(root)
    names = node_names(order)
    payload = payload_of(to_html(root, tmp_path / "page.html"))
    widths = set()
    for i, node in enumerate(order):
        key = f"n{i}"
        texts = [payload["nodes"][key]["data"], payload["nodes"][key]["start"][1]]
        texts += [u["grad"][1] for s in payload["steps"] + payload["naive"]["steps"]
                  for u in s["updates"] if u["id"] == key]
        if key == payload["root"]:
            texts.append(payload["seed"][1])
        width = (CHAR_W * len(names[id(node)]) + BOX_PAD + CHAR_W * max(map(len, texts))
                 + BOX_PAD)
        assert graph.sizes[key][0] == pytest.approx(width)
        widths.add(round(width))
    assert len(widths) > 3


@pytest.mark.parametrize("name", ["wide", "neuron", "reuse"])
def test_fields_fit_every_text_they_will_show(tmp_path, graphs, name):
    root = graphs[name]()
    path = to_html(root, str(tmp_path / "page.html"))
    text = Path(path).read_text()
    payload = payload_of(path)
    order = reading_order(root)
    grads: dict[str, list[str]] = {}
    naive = payload["naive"]["steps"]
    for done in range(len(backward_steps(root)) + 1):
        for key, grad in expected_grads(graphs[name](), done).items():
            grads.setdefault(key, []).append("grad " + format_number(float(grad)))
    for step in naive:
        for update in step["updates"]:
            grads[update["id"]].append(update["grad"][1])
    for i, node in enumerate(order):
        key = f"n{i}"
        group = re.search(rf'<g class="value" id="{key}".*?</g>', text).group(0)
        rect = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', group)
        line = re.search(r'<line x1="([\d.]+)"', group)
        right, split = float(rect.group(1)) + float(rect.group(2)), float(line.group(1))
        longest = max([f"data {format_number(node._value)}", "data ?", *grads[key]], key=len)
        assert MONOSPACE_14PX * len(longest) + 4 <= right - split, (key, longest)
    if name == "wide":
        assert "grad -246913.5780" in grads["n0"] + grads["n1"]


def test_the_naive_order_is_on_the_page(tmp_path, graphs):
    payload = payload_of(to_html(graphs["reuse"](), tmp_path / "page.html"))
    naive = payload["naive"]
    assert [s["title"].split(".")[0] for s in naive["steps"]] == ["c", "b", "b"]
    assert naive["steps"][-1]["updates"][-1]["grad"] == [repr(8.0), "grad 8.0000"]
    assert naive["differ"] == [{"id": "n0", "badge": "correct: 4.0000",
                                "text": "a.grad: naive 8.0000, correct 4.0000"}]
    assert "b (2 times)" in naive["summary"]
    assert payload_of(to_html(graphs["neuron"](), tmp_path / "n.html"))["naive"]["differ"] == []


def test_the_naive_order_of_a_tensor_graph_is_on_the_page(tmp_path, teaching_graphs):
    """The same replay as on Values, with arrays: what it gets wrong beside the right values."""
    path = to_html(tensor_reuse(), tmp_path / "page.html")
    assert 'value="naive" disabled' not in Path(path).read_text()
    naive = payload_of(path)["naive"]
    assert [s["title"].split(".")[0] for s in naive["steps"]] == ["c", "add1", "b", "b"]
    assert [u["change"] for u in naive["steps"][-1]["updates"]] == [
        "a.grad norm: 6.9282 -> 10.3923", "a.grad norm: 10.3923 -> 13.8564"]
    assert naive["steps"][-1]["updates"][-1]["grad"] == ["grad (3,), norm 13.8564"] * 2
    assert naive["differ"] == [{
        "id": "n0", "badge": "correct: (3,), norm 6.9282",
        "text": "a.grad: naive [8.0000, 8.0000, 8.0000], correct [4.0000, 4.0000, 4.0000]"}]
    assert "b (2 times)" in naive["summary"]
    a = Tensor(np.ones((50, 50)), requires_grad=True, label="a")
    for _ in range(12):  # 4096 paths from the root to a: the walk stops at 4 calls a step
        a = a + a
    naive = payload_of(to_html(a.sum(), tmp_path / "paths.html"))["naive"]
    assert len(naive["steps"]) == 4 * 13 and "was stopped there" in naive["summary"]
    # no reuse, and b's gradient summed back over the batch: the two orders agree
    payload = payload_of(to_html(teaching_graphs["tensor"]()[0], tmp_path / "t.html"))
    assert payload["naive"]["differ"] == []
    assert [s["updates"] for s in payload["naive"]["steps"]] == [
        s["updates"] for s in payload["steps"]]


def test_the_forward_pass_names_each_op(tmp_path, graphs):
    payload = payload_of(to_html(graphs["neuron"](), tmp_path / "page.html"))
    assert [f["text"] for f in payload["forward"]] == [
        "mul1 = x1 * w1 = -6.0000", "mul2 = x2 * w2 = 0.0000", "add1 = mul1 + mul2 = -6.0000",
        "add2 = add1 + b = 0.8814", "tanh1 = tanh(add2) = 0.7071"]
    x = Value(3.0, label="x")
    assert payload_of(to_html(x**2, tmp_path / "p.html"))["forward"][0]["text"] == (
        "pow1 = x**2 = 9.0000")


def test_a_model_s_parameters_are_named_as_in_its_state_dict(tmp_path, teaching_graphs):
    loss, model = teaching_graphs["mlp"]()
    order = reading_order(loss)
    assert (len(order), len(backward_steps(loss, accumulate=False))) == (41, 24)
    page = parse(to_html(loss, tmp_path / "page.html", params=model))
    names = {v["data-name"] for v in page.values.values()}
    assert {"0.weight[1, 0]", "0.bias[2]", "2.weight[0, 2]", "2.bias[0]", "x0", "loss"} <= names
    assert not any(name.startswith("leaf") and name != "leaf1" for name in names)
    assert "2.weight[0, 2].grad += relu3.data * out.grad" in json.dumps(
        payload_of(str(tmp_path / "page.html"))["steps"])


def test_a_reused_input_s_edges_are_marked(tmp_path, graphs):
    text = Path(to_html(graphs["reuse"](), tmp_path / "page.html")).read_text()
    assert text.count('class="reuse"') == 2 and text.count(">×2</text>") == 2


def test_the_layout_is_graphviz_s_when_installed_else_the_builtin(tmp_path, graphs, monkeypatch):
    path = tmp_path / "page.html"
    if find_renderer() is not None:
        assert 'data-layout="graphviz"' in Path(to_html(graphs["neuron"](), path)).read_text()
    builtin = to_html(graphs["neuron"](), path, layout="builtin")
    assert 'data-layout="builtin"' in Path(builtin).read_text()
    monkeypatch.setattr(page_module, "find_renderer", lambda: "dot")

    def failing(graph, timeout, rankdir):
        raise RuntimeError("dot -Tplain did not finish within 20 s")

    monkeypatch.setattr(page_module, "graphviz_layout", failing)
    assert 'data-layout="builtin"' in Path(to_html(graphs["neuron"](), path)).read_text()
    monkeypatch.setattr(page_module, "find_renderer", lambda: None)
    assert 'data-layout="builtin"' in Path(to_html(graphs["neuron"](), path)).read_text()
    monkeypatch.undo()
    monkeypatch.setattr("chaingrad.show.layout.find_renderer", lambda: None)
    with pytest.raises(RendererNotFoundError, match="layout='graphviz' needs a Graphviz"):
        to_html(graphs["neuron"](), path, layout="graphviz")


@pytest.mark.parametrize("name", ["neuron", "reuse", "mlp", "tensor"])
def test_rankdir_auto_takes_the_direction_that_fits_the_frame(tmp_path, teaching_graphs, name):
    """TB if the drawing top to bottom, fitted whole to the page's frame, is 1.25 times as
    large as left to right (the small Tensor graph), else LR; sizes as laid out."""
    root, params = teaching_graphs[name]()
    scale, drawn = {}, {}
    for rankdir in ("LR", "TB", "auto"):
        text = Path(to_html(root, tmp_path / f"{rankdir}.html", params=params,
                            rankdir=rankdir)).read_text()
        svg = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"[^>]*data-rankdir="(\w+)"',
                        text)
        scale[rankdir] = min(page_module.FRAME[0] / float(svg[1]),
                             page_module.FRAME[1] / float(svg[2]))
        drawn[rankdir] = svg[3]
    assert drawn["auto"] == ("TB" if scale["TB"] >= 1.25 * scale["LR"] else "LR")
    assert drawn["auto"] == {"tensor": "TB"}.get(name, "LR")
    with pytest.raises(ValueError, match="to_html: rankdir must be one of auto, LR, TB, RL, "
                                         "BT, got 'up'"):
        to_html(root, tmp_path / "up.html", rankdir="up")


def test_a_graph_of_a_thousand_nodes_gets_a_page(tmp_path):
    """The largest graph max_nodes lets through, laid out by the built-in layout."""
    random.seed(1)
    model = MLP(2, [16, 16, 1])
    loss = (model([Value(0.5), Value(-1.0)]) - 1) ** 2
    assert 900 <= len(reading_order(loss)) <= 1000
    path = to_html(loss, tmp_path / "page.html", params=model, layout="builtin")
    assert len(parse(path).values) == len(reading_order(loss))


def test_html_page_for_a_tensor_graph(tmp_path, tensor_mlp):
    root = tensor_mlp()
    path = to_html(root, tmp_path / "mlp.html")
    assert all(n.grad is None for n in reading_order(root))  # no real backward ran
    text = Path(path).read_text()
    assert 'data-name="W1" data-data="(5, 3) float64" data-grad="grad None"' in text
    assert ">data (5, 3) float64</text>" in text
    payload = json.loads(text.split('id="chaingrad-data">')[1].split("</script>")[0])
    start = {key: node["start"][0] for key, node in payload["nodes"].items()}
    start[payload["root"]] = payload["seed"][0]
    assert start == expected_grads(root, 0)
    for done, step in enumerate(payload["steps"], start=1):
        shown = expected_grads(root, done)
        assert {u["id"]: u["grad"][0] for u in step["updates"]}.items() <= shown.items()
    assert "matmul : transpose1.grad += x.data.T @ out.grad" in text
    assert payload["naive"]["differ"] == []  # every node is used once


# ---- the page in Chromium ----


@pytest.fixture(scope="module")
def tab(browser):
    """One browser tab that the module's tests take turns on: each opens its page in it
    (a new document each time), rather than start a tab of its own (a quarter of a second
    of Chromium's time each)."""
    page = browser.new_page()
    yield page
    page.close()


@pytest.fixture
def open_page(tab, browser):
    """Open a page file at a window size (the first in the module's ``tab``, any other in a
    tab of its own); at the end, no script error, no console error and no request but for
    the file itself."""
    opened = []

    def _open(path, size=(1280, 800)):
        page = tab if not opened else browser.new_page()
        page.set_viewport_size({"width": size[0], "height": size[1]})
        requests: list[str] = []
        errors: list[str] = []
        listeners = {"request": lambda request: requests.append(request.url),
                     "pageerror": lambda error: errors.append(str(error)),
                     "console": lambda m: errors.append(m.text) if m.type == "error" else None}
        for event, listener in listeners.items():
            page.on(event, listener)
        page.goto(Path(path).as_uri())
        opened.append((page, listeners, requests, errors))
        return page

    yield _open
    for page, listeners, requests, errors in opened:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)
        if page is tab:
            page.goto("about:blank")  # the next test starts from an empty document
        else:
            page.close()
        assert errors == []
        assert requests and [url for url in requests if not url.startswith("file://")] == []


IN_VIEW = """() => {
  const vw = window.innerWidth, vh = window.innerHeight, slack = 0.5;
  const box = document.getElementById("scroll"), b = box.getBoundingClientRect();
  const area = {left: b.left + box.clientLeft, top: b.top + box.clientTop};
  area.right = area.left + box.clientWidth; area.bottom = area.top + box.clientHeight;
  const now = document.getElementById("now").getBoundingClientRect();
  const within = (r, a) => r.width > 0 && r.left >= a.left - slack && r.top >= a.top - slack &&
    r.right <= a.right + slack && r.bottom <= a.bottom + slack;
  const view = {left: 0, top: 0, right: vw, bottom: vh};
  const out = [];
  const check = (el, inside, what) => {
    const r = el.getBoundingClientRect();
    if (!within(r, view) || !within(r, inside)) out.push(what);
  };
  check(document.getElementById("controls"), view, "controls");
  check(document.getElementById("keys"), view, "the keys");
  check(document.getElementById("count"), now, "step k of N");
  document.querySelectorAll("#formula .update").forEach((el, i) => check(el, now, "formula " + i));
  document.querySelectorAll("g.value.running, g.op.running, g.value.updated, g.value.input")
    .forEach((el) => check(el, area, el.id));
  const page = document.scrollingElement;
  if (page.scrollWidth > vw) out.push("page wider than the window: " + page.scrollWidth);
  if (page.scrollHeight > vh) out.push("page taller than the window: " + page.scrollHeight);
  const svg = document.getElementById("graph");
  const px = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width * 14;
  if (px < 10 - 1e-6) out.push("text of " + px + " px");
  return out;
}"""


def state(page) -> dict:
    return page.evaluate("""() => ({
      step: document.getElementById("status").dataset.step,
      steps: document.getElementById("status").dataset.steps,
      count: document.getElementById("count").textContent,
      grads: Object.fromEntries([...document.querySelectorAll("g.value")].map(
        (g) => [g.id, g.getAttribute("data-grad")])),
      shown: Object.fromEntries([...document.querySelectorAll("g.value")].map(
        (g) => [g.id, g.querySelector(".grad").textContent])),
      formula: [...document.querySelectorAll("#formula .update")].map(
        (el) => el.firstChild.textContent),
      running: [...document.querySelectorAll("g.value.running")].map((g) => g.id),
      live: document.getElementById("now").textContent,
    })""")


README_SHOTS = {"mlp_1280", "reuse_naive_800"}  # the README shows these
# where to remake them: resolved now, since a test may run the README's snippet elsewhere
SHOTS_FOLDER = os.environ.get("CHAINGRAD_SCREENSHOTS")
SHOTS_FOLDER = Path(SHOTS_FOLDER).resolve() if SHOTS_FOLDER else None


def screenshot(page, tmp_path, name: str) -> None:
    """Save a screenshot beside the test's files; the README's also into
    $CHAINGRAD_SCREENSHOTS if set (docs/images, to remake them)."""
    page.screenshot(path=str(tmp_path / f"page_{name}.png"))
    if SHOTS_FOLDER and name in README_SHOTS:
        page.screenshot(path=str(SHOTS_FOLDER / f"page_{name}.png"))


SHOT_AT = {"neuron": 2, "reuse": 2, "mlp": 9, "tensor": 2}


# Top to bottom, the MLP's input x0 feeds three neurons across the drawing: its steps are
# wider than an 800 px window holds at 10 px text (tests/show/test_layout.py)
DIRECTED = [(name, rankdir, size) for rankdir in ("auto", "LR", "TB")
            for name in ["neuron", "reuse", "mlp", "tensor"] for size in SIZES
            if (name, rankdir, size) != ("mlp", "TB", "800")]


@pytest.mark.parametrize(("name", "rankdir", "size"), DIRECTED, ids="-".join)
def test_every_step_is_in_view_and_right(tmp_path, monkeypatch, teaching_graphs, open_page,
                                         name, rankdir, size):
    """At every step: the controls, "step k of N", the running node, its op, each input it
    updates and the formula with before -> after on screen, the page neither wider nor
    taller than the window, text of 10 px or more, every gradient the engine's; drawn in
    the direction rankdir='auto' chooses, left to right, and top to bottom. The MLP's
    'auto' page is the one the README's snippet writes, run as written: the README's
    screenshot."""
    if name == "mlp" and rankdir == "auto":
        made = run_readme_snippet(tmp_path, monkeypatch)
        root, params, path = made["loss"], made["model"], tmp_path / "loss.html"
    else:
        root, params = teaching_graphs[name]()
        path = to_html(root, tmp_path / f"{name}.html", params=params, rankdir=rankdir)
    page = open_page(path, SIZES[size])
    steps = backward_steps(root, accumulate=False, params=params)
    total = len(steps)
    for done in range(total + 1):
        if done:
            page.keyboard.press("ArrowRight")
        shown = state(page)
        assert (shown["step"], shown["steps"]) == (str(done), str(total))
        assert shown["count"] == f"step {done} of {total}"
        assert page.evaluate(IN_VIEW) == [], f"after step {done}"
        assert shown["grads"] == expected_grads(root, done)
        if done:
            step = steps[done - 1]
            assert shown["formula"] == [u.text(step.op) for u in step.updates]
            live = " ".join(shown["live"].split())  # the live region: status and formulas
            assert f"step {done} of {total}" in live and step.name in live
            assert all(" ".join(f"{u.text(step.op)} {u.name}".split()) in live
                       for u in step.updates)
            position = [id(n) for n in reading_order(root)].index(id(step.node))
            assert shown["running"] == [f"n{position}"]
        if done == SHOT_AT[name]:
            screenshot(page, tmp_path, f"{name}_{size}" + ("" if rankdir == "auto" else
                                                          f"_{rankdir}"))
    assert page.is_disabled("#step")
    if not hasattr(root._value, "shape"):
        root.backward()  # the page left every .grad as it was
        assert [float(shown["grads"][f"n{i}"]) for i in range(len(shown["grads"]))] == [
            node.grad for node in reading_order(root)]


@pytest.mark.parametrize("size", SIZES)
def test_the_naive_order_shows_8_against_4(tmp_path, graphs, open_page, size):
    page = open_page(to_html(graphs["reuse"](), tmp_path / "reuse.html"), SIZES[size])
    page.select_option("#mode", "naive")
    assert state(page)["count"] == "step 0 of 3"
    page.keyboard.press("End")
    shown = state(page)
    assert shown["count"] == "step 3 of 3"
    assert float(shown["grads"]["n0"]) == 8.0 and shown["shown"]["n0"] == "grad 8.0000"
    assert "a.grad: naive 8.0000, correct 4.0000" in shown["live"]
    assert page.text_content("#n0 .badge") == "correct: 4.0000"
    assert "differs" in page.get_attribute("#n0", "class")
    assert page.evaluate(IN_VIEW) == []
    screenshot(page, tmp_path, f"reuse_naive_{size}")
    page.select_option("#mode", "correct")
    page.keyboard.press("End")
    shown = state(page)
    assert shown["count"] == "step 2 of 2" and float(shown["grads"]["n0"]) == 4.0


def test_the_naive_order_steps_on_a_tensor_graph(tmp_path, open_page):
    page = open_page(to_html(tensor_reuse(), tmp_path / "reuse.html"), SIZES["800"])
    page.select_option("#mode", "naive")
    assert state(page)["count"] == "step 0 of 4"
    for done in range(1, 5):
        page.keyboard.press("ArrowRight")
        assert state(page)["count"] == f"step {done} of 4"
        assert page.evaluate(IN_VIEW) == [], f"after step {done}"
    shown = state(page)
    assert shown["shown"]["n0"] == shown["grads"]["n0"] == "grad (3,), norm 13.8564"
    assert ("a.grad: naive [8.0000, 8.0000, 8.0000], correct [4.0000, 4.0000, 4.0000]"
            in shown["live"])
    assert page.text_content("#n0 .badge") == "correct: (3,), norm 6.9282"
    assert "differs" in page.get_attribute("#n0", "class")
    page.select_option("#mode", "correct")
    page.keyboard.press("End")
    assert state(page)["shown"]["n0"] == "grad (3,), norm 6.9282"


def test_the_forward_pass_comes_first_when_asked(tmp_path, graphs, open_page):
    page = open_page(to_html(graphs["neuron"](), tmp_path / "neuron.html"))
    page.check("#forward")
    assert state(page)["count"] == "step 0 of 11"  # 5 forward steps, the seed, 5 backward
    assert page.text_content("#n2 .data") == "data ?"  # mul1 is not computed yet
    assert page.text_content("#n0 .data") == "data 2.0000"  # a leaf holds its data
    page.keyboard.press("ArrowRight")
    assert page.text_content("#n2 .data") == "data -6.0000"
    assert "mul1 = x1 * w1 = -6.0000" in state(page)["live"]
    assert page.get_attribute("#n2", "aria-label") == (
        "mul1: data -6.0000, grad 0.0000, computed in this step")
    assert page.text_content("#n2 .badge") == "computing"
    assert sorted(page.eval_on_selector_all("g.value.input", "els => els.map(e => e.id)")) == [
        "n0", "n1"]
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    assert "seed: tanh1.grad = 1.0000" in state(page)["live"]
    page.keyboard.press("End")
    assert state(page)["grads"] == expected_grads(graphs["neuron"](), 5)


def test_keyboard_stepping(tmp_path, graphs, open_page):
    root = graphs["neuron"]()
    page = open_page(to_html(root, tmp_path / "neuron.html"))
    keys = page.text_content("#help")
    for key in ("space", "Home", "End", "step", "play/pause", "zoom"):
        assert key in keys
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert state(page)["step"] == "2"
    page.keyboard.press("ArrowLeft")
    assert state(page)["step"] == "1" and state(page)["grads"] == expected_grads(root, 1)
    page.keyboard.press("End")
    assert state(page)["step"] == "5"
    page.keyboard.press("Home")
    assert state(page)["step"] == "0" and state(page)["grads"] == expected_grads(root, 0)
    page.click("#step")  # a click leaves no focus behind: space plays at once
    assert state(page)["step"] == "1"
    page.keyboard.press(" ")
    assert page.text_content("#play") == "pause"
    page.keyboard.press(" ")
    assert page.text_content("#play") == "play"
    page.keyboard.press("Home")
    page.focus("#step")  # a keyboard user's space presses the focused button
    page.keyboard.press(" ")
    assert state(page)["step"] == "1" and page.text_content("#play") == "play"


def test_back_reset_go_to_and_play(tmp_path, graphs, open_page):
    root = graphs["neuron"]()
    page = open_page(to_html(root, tmp_path / "neuron.html"))
    page.click("#step")
    page.click("#step")
    page.click("#back")
    assert state(page)["grads"] == expected_grads(root, 1)
    page.fill("#goto", "4")
    page.click("#go")
    assert state(page)["step"] == "4" and state(page)["grads"] == expected_grads(root, 4)
    page.click("#reset")
    assert state(page)["step"] == "0" and page.is_disabled("#back")
    page.evaluate("document.body.dataset.interval = '40'")  # play faster
    page.select_option("#speed", "4")
    page.click("#play")
    page.wait_for_selector('#status[data-step="5"]')
    page.wait_for_function("document.getElementById('play').textContent === 'play'")
    assert state(page)["grads"] == expected_grads(root, 5)
    page.click("#history summary")
    page.wait_for_selector("#log div")
    assert "x1.grad += w1.data * out.grad = -3.0000 * 0.5000" in page.text_content("#log")
    assert page.evaluate(IN_VIEW) == []  # the open history leaves the step in view


def text_px_js() -> str:
    """JavaScript for the drawing's text size on screen, in px."""
    return ("(() => { const svg = document.getElementById('graph');"
            " return svg.getBoundingClientRect().width / svg.viewBox.baseVal.width"
            " * parseFloat(getComputedStyle(svg.querySelector('text')).fontSize); })()")


def test_zoom_keeps_text_at_10_px_or_more(tmp_path, teaching_graphs, open_page):
    """Zooming out by hand, to follow a step, or to "fit", stops at 10 px text."""
    loss, model = teaching_graphs["mlp"]()
    page = open_page(to_html(loss, tmp_path / "mlp.html", params=model), SIZES["800"])
    text_px = text_px_js()
    start = page.evaluate(text_px)
    for _ in range(10):
        page.click("#zoomout")
    assert page.evaluate(text_px) == pytest.approx(10.0)
    page.keyboard.press("+")
    assert page.evaluate(text_px) > 10.0
    page.click("#fit")  # the MLP is too big for 10 px text here: "fit" stops at 10 px
    assert page.evaluate(text_px) == pytest.approx(10.0)
    page.keyboard.press("-")  # by hand, no further down
    assert page.evaluate(text_px) == pytest.approx(10.0)
    for _ in range(9):
        page.click("#zoomin")
    assert page.evaluate(text_px) > start
    page.keyboard.press("ArrowRight")
    assert page.evaluate(IN_VIEW) == []  # the step still in view, zoomed out if need be


def test_fit_shows_a_small_graph_whole(tmp_path, graphs, open_page):
    page = open_page(to_html(graphs["neuron"](), tmp_path / "neuron.html"))
    width = "document.getElementById('graph').getBoundingClientRect().width"
    box = "document.getElementById('scroll').clientWidth"
    assert page.evaluate(width) <= page.evaluate(box)  # whole from the start at 1280 px
    page.click("#zoomin")
    page.click("#zoomin")
    assert page.evaluate(width) > page.evaluate(box)
    page.click("#fit")
    assert page.evaluate(width) <= page.evaluate(box)


OUTSIDE_THE_FRAME = """() => {
  const box = document.getElementById("scroll"), b = box.getBoundingClientRect(), slack = 0.5;
  const left = b.left + box.clientLeft, top = b.top + box.clientTop;
  const right = left + box.clientWidth, bottom = top + box.clientHeight;
  return [...document.querySelectorAll("g.value rect, g.op ellipse")].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.left < left - slack || r.top < top - slack || r.right > right + slack ||
      r.bottom > bottom + slack;
  }).map((el) => el.parentNode.id);
}"""

ROOM_LEFT = """() => {
  const box = document.getElementById("scroll");
  const svg = document.getElementById("graph").getBoundingClientRect();
  return Math.min(box.clientWidth - svg.width, box.clientHeight - svg.height);
}"""

SCROLLS = """() => {
  const box = document.getElementById("scroll");
  return box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight;
}"""

FIT_SIZES = SIZES | {"narrow": (400, 720)}


@pytest.mark.parametrize("size", FIT_SIZES)
@pytest.mark.parametrize("name", ["neuron", "reuse", "mlp", "tensor", "chain"])
def test_fit_shows_the_whole_graph_or_scrolls_but_never_below_10_px_text(
        tmp_path, teaching_graphs, open_page, name, size):
    """"fit" shows the whole graph as large as the frame holds it, but its text is never
    below 10 px (as the page's text is measured: the drawing's scale times the computed
    font size): a graph too big for that at this size (the MLP's, the long chain's) is drawn
    at 10 px text and scrolls, the view following the step. So it stays while stepping,
    until "fit" is pressed again or the zoom changed by hand."""
    root, params = (long_chain(), None) if name == "chain" else teaching_graphs[name]()
    page = open_page(to_html(root, tmp_path / f"{name}.html", params=params), FIT_SIZES[size])
    zoom = "Number(document.getElementById('graph').dataset.zoom)"
    before = page.evaluate(zoom)
    page.click("#fit")
    assert page.get_attribute("#fit", "aria-pressed") == "true"
    for key in ("Home", "End"):  # the last step's text is longer: the frame is smaller
        page.keyboard.press(key)
        text_px = page.evaluate(text_px_js())
        assert text_px >= 10 - 1e-6, (key, text_px)
        if page.evaluate(zoom) > round(10 / 14, 4):  # above 10 px text: whole, as large as fits
            assert page.evaluate(OUTSIDE_THE_FRAME) == [], key
            assert page.evaluate(ROOM_LEFT) <= 8 or page.evaluate(zoom) == 1.5
        else:  # too big to be whole at 10 px text: it scrolls, the step in view
            assert page.evaluate(SCROLLS), key
            if size != "narrow":  # (400 px: the controls take two lines, checked elsewhere)
                assert page.evaluate(IN_VIEW) == [], key
    page.keyboard.press("Home")
    page.click("#fit")  # pressed again: the zoom of before
    assert page.evaluate(zoom) == before and page.get_attribute("#fit", "aria-pressed") == "false"
    page.click("#fit")
    fitted = page.evaluate(zoom)
    page.keyboard.press("+")  # zooming by hand also ends "fit"
    page.keyboard.press("Home")
    assert page.evaluate(zoom) == pytest.approx(fitted * 1.2, rel=1e-3)


def test_nodes_are_named_for_a_screen_reader(tmp_path, graphs, open_page):
    page = open_page(to_html(graphs["neuron"](), tmp_path / "neuron.html"))
    assert page.get_attribute("#now", "aria-live") == "polite"
    assert page.get_attribute("#graph", "role") == "group"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # add2._backward: updates add1 and b
    label = page.get_attribute("#n6", "aria-label")
    assert label == "add1: data -6.0000, grad 0.5000, its grad is updated in this step"
    assert page.get_attribute("#n8", "aria-label") == (
        "add2: data 0.8814, grad 0.5000, running its _backward in this step")
    assert page.text_content("#n8 .badge") == "running _backward"
    assert page.text_content("#n6 .badge") == "updated +="
    assert page.get_attribute("#n6", "role") == "img"


OVERFLOWS = """els => els.flatMap(g => {
  const box = g.querySelector("rect").getBBox();
  const [split, across] = [...g.querySelectorAll("line")];
  const x = split.x1.baseVal.value, y = across.y1.baseVal.value;
  const fields = {name: [box.x, x, box.y, box.y + box.height],
                  data: [x, box.x + box.width, box.y, y],
                  grad: [x, box.x + box.width, y, box.y + box.height]};
  return [...g.querySelectorAll("text.name, text.data, text.grad")].filter(text => {
    const r = text.getBBox(), [left, right, top, bottom] = fields[text.getAttribute("class")];
    return r.x < left + 2 || r.x + r.width > right - 2 || r.y < top || r.y + r.height > bottom;
  }).map(text => g.id + ": " + text.textContent);
})"""


@pytest.mark.parametrize("name", ["wide", "mixed"])
def test_every_text_fits_its_field_at_every_step(tmp_path, graphs, open_page, name):
    root = graphs[name]()
    page = open_page(to_html(root, str(tmp_path / "page.html")))
    for mode in ("correct", "naive"):
        page.select_option("#mode", mode)
        total = int(state(page)["steps"])
        for done in range(total + 1):
            if done:
                page.click("#step")
            assert page.eval_on_selector_all("g.value", OVERFLOWS) == [], (mode, done)


def test_accumulation_is_shown_step_by_step(tmp_path, open_page):
    a = Value(1.0, label="a")
    b = a + a
    b.label = "b"
    page = open_page(to_html(b * b + b, str(tmp_path / "page.html")), (900, 700))
    changes = []
    for _ in range(3):
        page.click("#step")
        changes.append(page.text_content("#formula"))
    # b is used three times: its grad grows 0 -> 1 (the +), then 1 -> 3 -> 5 (b * b)
    assert "b.grad: 0.0000 -> 1.0000" in changes[0]
    assert "b.grad: 1.0000 -> 3.0000" in changes[1] and "b.grad: 3.0000 -> 5.0000" in changes[1]
    assert "a.grad: 5.0000 -> 10.0000" in changes[2]  # a + a: two updates of a


def test_stepping_a_tensor_page_shows_shapes_and_norms(tmp_path, open_page, tensor_mlp):
    root = tensor_mlp()
    page = open_page(to_html(root, tmp_path / "mlp.html"))
    total = len(backward_steps(root, accumulate=False))
    for done in range(total + 1):
        if done:
            page.click("#step")
        shown = state(page)
        assert shown["grads"] == expected_grads(root, done)
        assert shown["shown"] == shown["grads"]
    page.click("#history summary")
    page.wait_for_selector("#log div")
    assert "out.grad = (4, 2), norm" in page.text_content("#log")


def test_the_builtin_layout_passes_the_same_checks_in_the_browser(tmp_path, teaching_graphs,
                                                                  open_page):
    loss, model = teaching_graphs["mlp"]()
    path = to_html(loss, tmp_path / "mlp.html", params=model, layout="builtin")
    page = open_page(path, SIZES["800"])
    assert page.get_attribute("#graph", "data-layout") == "builtin"
    for done in range(25):
        if done:
            page.keyboard.press("ArrowRight")
        assert page.evaluate(IN_VIEW) == [], f"after step {done}"


def test_a_step_too_wide_for_the_window_keeps_its_running_node_in_view(tmp_path, open_page):
    """x feeds the first and the last op of a long chain: the last step's inputs are
    further apart than the window holds even at 10 px text."""
    page = open_page(to_html(long_chain(), tmp_path / "long.html"), SIZES["800"])
    page.keyboard.press("ArrowRight")
    out = page.evaluate(IN_VIEW)
    assert out == ["n0"]  # only x, far to the left, is out of view
    assert page.evaluate(text_px_js()) == pytest.approx(10.0)  # zoomed out as far as it goes
