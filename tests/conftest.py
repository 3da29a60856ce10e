"""What every test module shares: the rule that CI runs every test, and helpers for
chaingrad's model files (``model_files``), fresh interpreters (``run_python``), a real
browser (``browser``), the graphs the backprop tools are shown on (``teaching_graphs``) and
a garbage collector that walks only the current test's objects
(``collector_sees_this_test_only``).

A test skips when what it needs is missing (torch for the oracle tests, Chromium for the
page, ...), so that ``python -m pytest`` works on a machine with less installed. CI
installs all of it and sets ``CHAINGRAD_NO_SKIPS=1``: then a single skip fails the run,
so that an oracle or a browser that silently went missing cannot pass as green.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import json
import os
import pathlib
import random
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
from typing import Any

import numerics
import pytest
from hypothesis import settings

from chaingrad import Value
from chaingrad.nn import MLP

# notebooks that import a library chaingrad does not need, and the library
NOTEBOOK_NEEDS = {"10_three_ways.ipynb": "torch"}


def pytest_configure(config: pytest.Config) -> None:
    """``pytest -m "not slow"``, the quick loop: property-based tests draw a fifth of their
    examples (``numerics.examples``; 20 where a test sets none), so that the loop takes
    under a minute. The full run (``python -m pytest``, CI) draws them all."""
    if config.getoption("markexpr", "").replace(" ", "") == "notslow":
        numerics.QUICK = True
        settings.register_profile("quick", max_examples=20, deadline=None)
        settings.load_profile("quick")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tutorial notebooks are end-to-end runs: marked slow, as the demos are; one that
    needs a library that is missing (torch for notebook 10) skips, saying which, and so
    does a docstring's example that imports torch (``to_torch``'s)."""
    no_torch = importlib.util.find_spec("torch") is None
    for item in items:
        if no_torch and isinstance(item, pytest.DoctestItem) and any(
                re.search(r"\bimport\b.*\btorch\b", example.source)
                for example in item.dtest.examples):
            item.add_marker(pytest.mark.skip(reason="its example needs torch: pip install torch"))
        if item.nodeid.endswith(".ipynb") or ".ipynb::" in item.nodeid:
            item.add_marker(pytest.mark.slow)
            needed = NOTEBOOK_NEEDS.get(pathlib.Path(item.nodeid.split("::")[0]).name)
            if needed and importlib.util.find_spec(needed) is None:
                item.add_marker(pytest.mark.skip(reason=f"needs {needed}: pip install {needed}"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CHAINGRAD_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter.write_line(f"CHAINGRAD_NO_SKIPS=1: {len(skipped)} test(s) were skipped; "
                            "every test must run here (see the reasons above)", red=True)


class ModelFiles:
    """Read and rewrite chaingrad's safetensors files by hand, as a hostile or careless
    editor would, and sign them again as ``chaingrad.save`` does (re-implemented here from
    the format's description, not imported): the SHA-256 of the whole file with the
    checksum's 64 hex digits taken as zeros."""

    CHECKSUM = re.compile(rb'"chaingrad\.sha256"\s*:\s*"([0-9a-f]{64})"')

    @staticmethod
    def split(data: bytes) -> tuple[dict, bytes]:
        """The header (parsed) and the tensor bytes of a safetensors file's bytes."""
        (n,) = struct.unpack("<Q", data[:8])
        return json.loads(data[8:8 + n]), data[8 + n:]

    @staticmethod
    def join(header: dict, body: bytes) -> bytes:
        raw = json.dumps(header).encode()
        return struct.pack("<Q", len(raw)) + raw + body

    def sign(self, data: bytes) -> bytes:
        """``data`` with its checksum made right (a placeholder is added if it has none)."""
        header, body = self.split(data)
        metadata = header.setdefault("__metadata__", {})
        metadata["chaingrad.sha256"] = "0" * 64
        data = self.join(header, body)
        (n,) = struct.unpack("<Q", data[:8])
        start, end = self.CHECKSUM.search(data[8:8 + n]).span(1)
        digest = hashlib.sha256(data).hexdigest().encode()
        return data[:8 + start] + digest + data[8 + end:]

    def architecture(self, path: os.PathLike) -> dict:
        header, _ = self.split(pathlib.Path(path).read_bytes())
        return json.loads(header["__metadata__"]["chaingrad"])

    def rewrite(self, path: os.PathLike, edit: Any = None, edit_header: Any = None,
                sign: bool = True) -> None:
        """Change the file's architecture (``edit(arch)``) or header (``edit_header``),
        keeping its tensors; signed again unless ``sign`` is False."""
        path = pathlib.Path(path)
        header, body = self.split(path.read_bytes())
        if edit is not None:
            arch = json.loads(header["__metadata__"]["chaingrad"])
            edit(arch)
            header["__metadata__"]["chaingrad"] = json.dumps(arch)
        if edit_header is not None:
            edit_header(header)
        data = self.join(header, body)
        path.write_bytes(self.sign(data) if sign else data)


@pytest.fixture
def model_files() -> ModelFiles:
    """Helpers to read, edit and re-sign chaingrad's model files (see ``ModelFiles``)."""
    return ModelFiles()


@pytest.fixture
def run_python() -> Any:
    """``run(code, *argv, timeout=None)``: the code run by a fresh interpreter (so that it
    can hide a module, or be killed), as a ``subprocess.CompletedProcess`` with text output."""

    def run(code: str, *argv: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=timeout, check=False)

    return run


# ---- a real browser, for the page that chaingrad.to_html writes ----

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync"]


@pytest.fixture(scope="session")
def graphviz_pure() -> str:
    """The path of the graphviz-pure program installed with chaingrad[viz] (a test
    dependency), to pass as ``renderer=``."""
    for folder in (None, sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        path = shutil.which("graphviz-pure", path=folder)
        if path:
            return path
    raise AssertionError("graphviz-pure is not installed: pip install 'chaingrad[viz]'")


def find_browser() -> str | None:
    """The Chromium to drive: $CHAINGRAD_CHROMIUM, else the first of BROWSER_NAMES on PATH.
    Playwright's own browser download is never used."""
    given = os.environ.get("CHAINGRAD_CHROMIUM")
    if given:
        return shutil.which(given)
    return next(filter(None, map(shutil.which, BROWSER_NAMES)), None)


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium driven through Playwright; the test skips (under
    CHAINGRAD_NO_SKIPS=1: fails the run) when the playwright package or a browser is missing.
    """
    try:
        from playwright import sync_api
    except ImportError:
        pytest.skip("the browser tests need the playwright package: pip install playwright")
    path = find_browser()
    if path is None:
        pytest.skip("the browser tests need Chromium: apt-get install chromium, or set "
                    "CHAINGRAD_CHROMIUM to a Chromium or Chrome executable")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


# ---- the graphs the backprop tools are shown on ----


def neuron_graph() -> Value:
    """micrograd's lecture neuron, tanh(x1*w1 + x2*w2 + b); the output is left unlabelled
    (it is drawn as tanh1)."""
    x1, w1 = Value(2.0, label="x1"), Value(-3.0, label="w1")
    x2, w2 = Value(0.0, label="x2"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    return (x1 * w1 + x2 * w2 + b).tanh()


def reuse_graph(a: float = 3.0) -> Value:
    """``b = a + a; c = b + b``: the naive walk gets a.grad = 8, the right answer is 4."""
    leaf = Value(a, label="a")
    b = leaf + leaf
    b.label = "b"
    c = b + b
    c.label = "c"
    return c


@pytest.fixture
def neuron() -> Any:
    """Builds micrograd's lecture neuron (``neuron()``), as the golden files show it."""
    return neuron_graph


@pytest.fixture
def reuse() -> Any:
    """Builds ``b = a + a; c = b + b`` with a = 3 (``reuse()``)."""
    return reuse_graph


GOLDEN = pathlib.Path(__file__).parent / "golden"


@pytest.fixture
def check_golden() -> Any:
    """``check_golden(name, text)``: text equals tests/golden/name (rewritten instead when
    CHAINGRAD_UPDATE_GOLDEN is set)."""
    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("CHAINGRAD_UPDATE_GOLDEN"):
            path.write_text(text)
        assert text == path.read_text(), f"{name} changed; see {path}"
    return check


def _neuron():
    return neuron_graph(), None


def _reuse():
    return reuse_graph(1.0), None


def _mlp_loss():
    """An MLP(2, [3, 1]) on one point with a squared loss: 41 nodes, 24 steps."""
    random.seed(0)
    model = MLP(2, [3, 1])
    out = model([Value(1.0, label="x0"), Value(-2.0, label="x1")])
    loss = (out - Value(1.0, label="y")) ** 2
    loss.label = "loss"
    return loss, model


def _small_tensor():
    from chaingrad import Tensor  # numpy: only when a test asks for this graph

    x = Tensor([[1.0, 2.0]], label="x")
    w = Tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]], requires_grad=True, label="W")
    b = Tensor([0.1, 0.2, 0.3], requires_grad=True, label="b")
    return (x @ w + b).relu().sum(), None


def _tensor_mlp(dtype: Any = None) -> Any:
    """A 3-5-2 MLP on a batch of 4, its mean log-likelihood negated: a one-element loss.

    The weights are fixed numbers (no random init), so that the loss shown is stable.
    """
    import numpy as np  # numpy: only when a test asks for this graph

    from chaingrad import Tensor

    dtype = np.float64 if dtype is None else dtype
    def param(shape, label):
        data = np.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=dtype).reshape(shape)
        return Tensor(data, requires_grad=True, label=label)

    x = Tensor(np.arange(12, dtype=dtype).reshape(4, 3) / 10, label="x")
    w1, b1 = param((5, 3), "W1"), param((5,), "b1")
    w2, b2 = param((2, 5), "W2"), param((2,), "b2")
    h = (x @ w1.T + b1).relu()
    logp = (h @ w2.T + b2).log_softmax()
    picked = logp * Tensor(np.eye(2, dtype=dtype)[[0, 1, 1, 0]], label="onehot")
    loss = -picked.sum() / 4
    loss.label = "loss"
    return loss


@pytest.fixture(scope="session")
def tensor_mlp() -> Any:
    """Builds a 3-5-2 Tensor MLP's loss with fixed weights (``tensor_mlp(dtype=float64)``),
    as the golden files of tests/show show it."""
    return _tensor_mlp


@pytest.fixture(scope="session")
def teaching_graphs():
    """The four graphs the step-by-step page is judged on, as ``name -> make`` where
    ``make()`` builds a fresh ``(root, params)``: the README's neuron, ``b = a + a; c = b +
    b``, an MLP(2, [3, 1]) with a squared loss (params: the model) and a small Tensor graph.
    """
    return {"neuron": _neuron, "reuse": _reuse, "mlp": _mlp_loss, "tensor": _small_tensor}


# ---- PyTorch as the oracle of chaingrad's torch-named functions ----


@pytest.fixture(scope="session")
def torch() -> Any:
    """PyTorch, the oracle; the test skips (under CHAINGRAD_NO_SKIPS=1: fails the run)
    without it."""
    return pytest.importorskip("torch")


class AgreesWithTorch:
    """``check(ours, theirs, *args)``: run ``ours`` on chaingrad Tensors and ``theirs`` on
    torch tensors, made from the same float64 arrays, and compare the outputs and the
    gradients of every floating argument (of ``sum(out * fixed weights)``).

    A floating numpy array becomes a leaf that requires a gradient on both sides, one
    wrapped in ``constant(array)`` a float64 tensor that does not; an integer array (class
    targets) is handed to ``ours`` as it is and to ``theirs`` as an int64 tensor; anything
    else is passed to both unchanged. Returns chaingrad's output.
    """

    class constant:  # noqa: N801 - used like a function: constant(array)
        """A floating array that takes no gradient (torch refuses one for a loss's weight)."""

        def __init__(self, array: Any):
            self.array = array

    def __init__(self, torch: Any):
        self.torch = torch

    def __call__(self, ours: Any, theirs: Any, *args: Any, atol: float = 1e-10,
                 rtol: float = 1e-7) -> Any:
        import numpy as np

        from chaingrad.tensor_engine import Tensor

        torch = self.torch
        mine, its = [], []
        for a in args:
            if isinstance(a, self.constant):
                mine.append(Tensor(a.array.astype(np.float64)))
                its.append(torch.tensor(a.array, dtype=torch.float64))
            elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
                mine.append(Tensor(a.astype(np.float64), requires_grad=True))
                its.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
            elif isinstance(a, np.ndarray):
                mine.append(a)
                its.append(torch.tensor(a))
            else:
                mine.append(a)
                its.append(a)
        out, expected = ours(*mine), theirs(*its)
        np.testing.assert_allclose(np.asarray(out._value), expected.detach().numpy(),
                                   atol=atol, rtol=rtol, err_msg="the outputs differ")
        leaves = [i for i, a in enumerate(its) if isinstance(a, torch.Tensor) and a.requires_grad]
        if leaves and out.requires_grad:
            weights = np.random.default_rng(1).uniform(0.5, 1.5, size=np.shape(out._value))
            (out * weights).sum().backward()
            (expected * torch.tensor(weights)).sum().backward()
            for i in leaves:
                np.testing.assert_allclose(np.asarray(mine[i].grad), its[i].grad.numpy(),
                                           atol=atol, rtol=rtol,
                                           err_msg=f"the gradients of argument {i} differ")
        return out


@pytest.fixture
def agrees_with_torch() -> AgreesWithTorch:
    """Compare a chaingrad function with torch's in float64, values and gradients (see
    ``AgreesWithTorch``); skips (fails under CHAINGRAD_NO_SKIPS=1) without torch."""
    return AgreesWithTorch(pytest.importorskip("torch"))


class StateConverter:
    """Carry a state dict (nested dicts, lists and tuples of tensors and numbers, such as
    an optimizer's) across the import line, tensor by tensor, as a user would:
    ``to_chaingrad`` makes each torch tensor ``chaingrad.tensor(t.numpy())``, ``to_torch``
    each chaingrad Tensor (or numpy array) ``torch.tensor(t.numpy())``; the rest is kept."""

    def __init__(self, torch: Any):
        self.torch = torch

    def to_chaingrad(self, obj: Any) -> Any:
        import chaingrad

        return self._walk(obj, self.torch.Tensor, lambda t: chaingrad.tensor(t.numpy()))

    def to_torch(self, obj: Any) -> Any:
        import numpy as np

        import chaingrad

        return self._walk(obj, (chaingrad.Tensor, np.ndarray),
                          lambda t: self.torch.tensor(np.asarray(t)))

    def _walk(self, obj: Any, kind: Any, convert: Any) -> Any:
        if isinstance(obj, kind):
            return convert(obj)
        if isinstance(obj, dict):
            return {k: self._walk(v, kind, convert) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._walk(v, kind, convert) for v in obj)
        return obj


@pytest.fixture
def state_converter() -> StateConverter:
    """Convert state dicts between torch and chaingrad (see ``StateConverter``); skips
    (fails under CHAINGRAD_NO_SKIPS=1) without torch."""
    return StateConverter(pytest.importorskip("torch"))


@pytest.fixture
def collector_sees_this_test_only() -> Any:
    """Set aside the objects alive before the test, for the test's duration.

    By the time a test runs, the process holds a few hundred thousand objects that it will
    keep (torch's, hypothesis's, earlier tests' modules), and every full pass of Python's
    cyclic garbage collector walks all of them again: a test that builds large graphs, or
    that counts objects with ``gc.collect()`` and ``gc.get_objects()``, pays for that over
    and over. ``gc.freeze()`` moves them to the collector's permanent generation, which it
    neither walks nor lists; the collector stays on and still frees this test's cycles.
    Afterwards, what is set aside is again what the run sets aside after collection
    (``pytest_collection_finish``) and what is still alive: ``gc.unfreeze()`` returns every
    object set aside, those too.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()  # this test's cycles, before the rest is set aside again
        gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Set aside what collection left alive (torch's, matplotlib's, hypothesis's and every
    test module's objects: a few hundred thousand), as ``collector_sees_this_test_only``
    does for one test, here once for the whole run: Python's collector then stops walking
    them again in every full pass, which the tests that build large graphs paid for."""
    gc.collect()
    gc.freeze()
