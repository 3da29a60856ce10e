"""benchmarks/run.py and versions.py keep working: tiny runs end to end, skips, usage errors,
agreement, and a worker importing chaingrad from the tree it is given.

No timing is asserted: only that every workload runs, reports numbers, and that the
engines compute the same thing.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chaingrad

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "benchmarks" / "run.py"
VERSIONS = ROOT / "benchmarks" / "versions.py"
CONV = ROOT / "benchmarks" / "conv.py"
OPS = ROOT / "benchmarks" / "ops.py"
sys.path.insert(0, str(ROOT / "benchmarks"))

from workloads import contest, engines, report, scalar, suite  # noqa: E402

QUICK = {"s1_ops": 30, "s2_points": 6, "s2_steps": 2, "s3_width": 3, "s3_depth": 2}


def _run(*args: str, env: dict | None = None, script: Path = RUN) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


@pytest.fixture
def micrograd_tree(tmp_path):
    """A source tree whose ``chaingrad`` is micrograd under chaingrad's scalar names."""
    pytest.importorskip("micrograd")
    package = tmp_path / "chaingrad"
    package.mkdir()
    (package / "__init__.py").write_text("from micrograd.engine import Value\n")
    (package / "nn.py").write_text("from micrograd.nn import MLP\n")
    return tmp_path


@pytest.fixture(scope="module")
def scripts() -> Iterator[dict[Path, Any]]:
    """run.py, versions.py, conv.py and ops.py imported into this process (benchmarks/ is
    on sys.path), to call their ``main(argv)`` without starting an interpreter each time."""
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            patch.setenv(variable, "1")  # as importing a script sets it; undone afterwards
        import conv
        import ops
        import run
        import versions
        yield {RUN: run, VERSIONS: versions, CONV: conv, OPS: ops}


def _usage_error(scripts: dict[Path, Any], capsys: pytest.CaptureFixture, script: Path,
                 *args: str) -> list[str]:
    """The lines that ``script``'s main(args) prints on stderr, having asserted that it
    exits with status 2 and prints nothing on stdout (so started no run)."""
    with pytest.raises(SystemExit) as stop:
        scripts[script].main(list(args))
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    return err.splitlines()


def _hide(tmp_path: Path, *packages: str) -> dict[str, str]:
    """An environment in which ``packages`` fail to import, as if not installed: a package
    of that name that raises ImportError, ahead of the real one on PYTHONPATH."""
    for missing in packages:
        fake = tmp_path / missing
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("raise ImportError('not installed (test)')\n")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))


@pytest.mark.slow
def test_quick_run_reports_every_workload(tmp_path):
    """Every workload, each scalar engine in its own worker, S3's memory probes; torch is
    hidden here (importing it costs 2.5 s in each of six processes): its contestants run
    in the next test, in this process."""
    out, md = tmp_path / "results.json", tmp_path / "RESULTS.md"
    done = _run("--quick", "--repeats", "1", "--json", str(out), "--markdown", str(md),
                env=_hide(tmp_path / "hidden", "torch"))
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    machine = payload["machine"]
    assert machine["cores"] >= 1 and machine["python"] == sys.version.split()[0]
    assert {"cpu", "versions", "env", "load_average_start", "load_average_end"} <= set(machine)
    assert machine["env"]["OMP_NUM_THREADS"] == "1"
    rows = {(r["workload"], r["engine"]): r for r in payload["results"]}
    for workload in ("S1", "S2", "S2c", "S3", "T1/8", "T1/16", "T2", "T3", "T4", "T5", "T6",
                     "T7"):
        engines_run = ["chaingrad"] + (["micrograd"] if workload[0] == "S" else [])
        for engine in engines_run + (["numpy"] if workload[:2] in ("T1", "T4", "T5", "T6",
                                                                  "T7") else []):
            row = rows[(workload, engine)]
            assert row["status"] == "ok", row
            for name, metric in row["metrics"].items():
                if name == "rss B/node" and metric["median"] == 0:
                    continue  # a tiny graph can fit in pages the process already had
                assert metric["median"] > 0
        for metric in rows[(workload, "chaingrad")]["metrics"].values():
            if metric["median"] == 0:  # the rss probe above: no ratio to a zero
                assert metric["ratio_to_chaingrad"] is None
                continue
            assert metric["ratio_to_chaingrad"] == pytest.approx(1.0)
    assert set(rows["S3", "chaingrad"]["metrics"]) >= {"ns/node", "tracemalloc B/node"}
    assert set(rows["S3", "micrograd"]["metrics"]) >= {"ns/node", "tracemalloc B/node"}
    assert "python benchmarks/run.py --quick" in md.read_text()
    assert "S3: deep scalar MLP" in done.stdout


@pytest.mark.parametrize("workload", ["S1", "S2", "S3", "T1", "T2", "T3", "T4", "T5", "T6",
                                      "T7"])
def test_every_workload_runs_a_block_on_torch(workload):
    """torch's contestants, as run.py builds them (scalar ones in a worker, from the same
    classes), each timing one block of the quick sizes."""
    pytest.importorskip("torch")
    sizes = suite.SIZES["quick"]
    if workload[0] == "T":
        from workloads import tensor

        _, batch, steps = suite.tensor_runs(workload, sizes)[0]
        work, label, _ = tensor.make("torch", workload, batch=batch, steps=steps,
                                     n_ops=sizes["t3_ops"])
    else:
        engine = engines.make("torch")
        if workload == "S1":
            work = scalar.ChainS1(engine, sizes["s1_ops"])
        elif workload == "S2":
            import numpy as np

            rng = np.random.default_rng(0)
            points = sizes["s2_points"]
            X, y = rng.standard_normal((points, 2)), rng.choice([-1, 1], points)
            work = scalar.MoonsStepS2(engine, X, y, sizes["s2_steps"])
        else:
            work = scalar.DeepMlpS3(engine, sizes["s3_width"], sizes["s3_depth"])
        label = engine.label
    assert label.startswith("torch")
    metrics = work.block()
    assert set(metrics) == set(suite.METRICS[workload]) - {"tracemalloc B/node", "rss B/node"}
    assert min(metrics.values()) > 0
    if workload == "S3":
        peak = scalar.peak_memory(engines.make("torch"), sizes["s3_width"],
                                  sizes["s3_depth"], "tracemalloc")
        assert peak["tracemalloc B/node"] > 0


@pytest.mark.slow
def test_missing_competitors_are_skipped_with_the_install_command(tmp_path):
    env = _hide(tmp_path, "micrograd", "torch")
    done = _run("--quick", "--only", "S2", "--repeats", "1",
                "--worker", f"micrograd-viz={tmp_path / 'no-such-python'}", env=env)
    assert done.returncode == 0, done.stderr
    assert "skipping micrograd: not importable here" in done.stdout
    assert "pip install micrograd==0.1.0" in done.stdout
    assert "skipping torch: not importable here" in done.stdout
    assert "pip install torch==2.13.0" in done.stdout
    assert "skipping micrograd-cpp-engine: needs its own virtualenv" in done.stdout
    assert "scikit-build-core[pyproject]<0.8" in done.stdout
    assert "skipping micrograd-viz: cannot start" in done.stdout
    table = done.stdout[done.stdout.index("S2: "):]
    assert "micrograd" in table and "not installed" in table


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "run.py: unrecognized arguments: --bogus"),
    (["--repeats"], "run.py: argument --repeats: expected one argument"),
    (["--only", "S9"], "--only: unknown workload"),
    (["--repeats", "0"], "--repeats: must be >= 1"),
    (["--worker", "nograd=/usr/bin/python3"], "--worker: unknown engine 'nograd'"),
])
def test_bad_command_line_is_one_line_and_exit_2(scripts, capsys, args, message):
    (line,) = _usage_error(scripts, capsys, RUN, *args)
    assert message in line


# the smallest run of each script, so that a check missing before the run ends quickly
SMALLEST_RUNS = {RUN: ["--quick", "--only", "S1", "--repeats", "1"],
                 VERSIONS: ["--before", ".", "--after", ".", "--quick", "--only", "S1",
                            "--repeats", "1", "--processes", "1"],
                 CONV: ["--quick", "--runs", "1", "--budget", "0.01"],
                 OPS: ["--quick", "--runs", "1", "--budget", "0.01", "--only", "x + y"]}


@pytest.mark.parametrize("script, option", [(RUN, "--json"), (RUN, "--markdown"),
                                            (VERSIONS, "--json"), (VERSIONS, "--markdown"),
                                            (CONV, "--json")])
def test_an_output_file_in_a_missing_folder_is_refused_before_the_run(
        scripts, capsys, monkeypatch, tmp_path, script, option):
    monkeypatch.chdir(ROOT)
    target = tmp_path / "no-such-folder" / "out.txt"
    assert _usage_error(scripts, capsys, script, *SMALLEST_RUNS[script], option,
                        str(target)) == [
        f"{script.name}: {option}: expected a file in an existing folder, got {str(target)!r} "
        f"(no folder {target.parent})"]


@pytest.mark.parametrize("script", [RUN, VERSIONS, CONV])
def test_an_output_path_that_is_a_folder_is_refused_before_the_run(
        scripts, capsys, monkeypatch, tmp_path, script):
    monkeypatch.chdir(ROOT)
    assert _usage_error(scripts, capsys, script, *SMALLEST_RUNS[script], "--json",
                        str(tmp_path)) == [
        f"{script.name}: --json: expected a file path, got the folder {str(tmp_path)!r}"]


@pytest.mark.parametrize("script, args", [(RUN, []), (VERSIONS, ["--before", ".", "--after", "."]),
                                          (CONV, [])])
def test_an_unknown_option_is_one_line_as_the_readme_promises(script, args):
    """benchmarks/README.md: 'A bad command line prints one line and exits with status 2'."""
    done = _run(*args, "--bogus", script=script)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"{script.name}: unrecognized arguments: --bogus"]


@pytest.mark.parametrize("workload", suite.WORKLOADS)
def test_a_tables_columns_never_run_together(workload):
    metrics = suite.METRICS[workload]
    rows = [report.Row(workload, "chaingrad 0.1.0", "chaingrad"),
            report.Row(workload, "micrograd 0.1.0", "micrograd")]
    for row, value in zip(rows, (123_456_789.0, 0.000123)):
        row.add({m: value for m in metrics})
    lines = report.table("title", rows, metrics).splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == ["engine", *metrics, "spread"]
    for row, line in zip(rows, lines[2:]):
        assert re.split(r"\s{2,}", line.strip()) == [row.label] + [
            f"{report.number(row.median(m))} ({row.median(m) / 123_456_789.0:.2f}x)"
            for m in metrics]


def test_no_ratio_is_given_to_a_zero_median():
    """An rss probe can read 0 B/node (the graph fit in pages already mapped): no engine
    gets a ratio to it, and the table shows the medians alone."""
    rows = [report.Row("S1", "chaingrad 0.1.0", "chaingrad"),
            report.Row("S1", "micrograd 0.1.0", "micrograd")]
    for row, value in zip(rows, (0.0, 96.0)):
        row.add({"rss B/node": value})
    assert report.ratios(rows, "rss B/node") == {}
    assert "x)" not in report.table("title", rows, ["rss B/node"])


@pytest.mark.parametrize("value, shown", [(1.0012, "1.00"), (0.98, "0.980"), (12.0, "12.0"),
                                          (0.012345, "0.0123"), (64.23, "64.2"),
                                          (99.97, "100"), (1212.4, "1,212")])
def test_a_measurement_is_shown_with_three_significant_digits(value, shown):
    assert report.number(value) == shown


def test_versions_shows_a_millisecond_with_its_significant_digits(scripts):
    versions = scripts[VERSIONS]
    rows = [report.Row("T1/128", side, "chaingrad") for side in versions.SIDES]
    for row, value in zip(rows, (1.0012, 0.98)):  # T1 at batch 128: about a millisecond
        row.add({"ms/step": value})
    lines = versions.table("T1", rows, versions.compare(rows, ("ms/step",))).splitlines()
    assert lines[2].split() == ["ms/step", "1.00", "0.980", "0.979"]


def test_the_command_that_rewrites_results_md_is_marked_as_the_maintainers():
    command, found = "--markdown benchmarks/RESULTS.md", []
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if (any(part.startswith(".") for part in relative.parts) or path == Path(__file__)
                or path.suffix not in (".md", ".py", ".ipynb", ".toml", ".txt", ".cfg")):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            if command in line:
                found.append(str(relative))
                assert "maintainers" in (lines[k - 1] + line).lower(), f"{relative}:{k + 1}"
    assert "benchmarks/README.md" in found


def test_a_worker_process_runs_blocks_like_the_main_process():
    remote = contest.Remote(sys.executable, "chaingrad", False, "S1", QUICK, None, None)
    try:
        assert remote.label.startswith("chaingrad")
        metrics = remote.block()
        assert set(metrics) == {"fwd ns/op", "bwd ns/op"} and min(metrics.values()) > 0
    finally:
        remote.close()
    assert remote.proc.returncode == 0


def test_s3_node_count_is_the_graph_size():
    import chaingrad

    engine = engines.make("chaingrad")
    work = scalar.DeepMlpS3(engine, width=3, depth=2)
    out = work.model([engine.value(v) for v in work.x])
    assert len(chaingrad.topological_order(out)) == work.nodes == scalar.deep_mlp_nodes(3, 2)


def test_s2_computes_the_same_losses_on_chaingrad_and_torch():
    pytest.importorskip("torch")
    import numpy as np

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((6, 2)), rng.choice([-1, 1], 6)
    losses = {}
    for name in ("chaingrad", "torch"):
        work = scalar.MoonsStepS2(engines.make(name), X, y, steps=2)
        work.block()
        losses[name] = work.last_loss
    assert losses["chaingrad"] == pytest.approx(losses["torch"], rel=1e-12)


@pytest.mark.parametrize("workload", ["T4", "T5", "T6", "T7"])
def test_the_lectures_steps_compute_the_same_losses_on_chaingrad_and_torch(workload):
    """One code, two modules: the same seeds give the same data, weights, dropout masks
    and so the same losses (float32: within rounding)."""
    pytest.importorskip("torch")
    from workloads import lectures, tensor

    make_step = lectures.STEPS[workload]
    losses = {}
    for name, module in (("chaingrad", chaingrad), ("torch", tensor.torch_module())):
        work = make_step(module, batch=4)
        for _ in range(3):
            work.step()
        losses[name] = work.loss.item()
    assert losses["chaingrad"] == pytest.approx(losses["torch"], rel=1e-5)


def test_t4_by_hand_in_numpy_is_the_same_step_as_on_chaingrad():
    """The floor row is the step it claims to be: for the same batches, the numpy program
    written out by hand gives the losses and the parameters chaingrad's step gives."""
    from workloads import by_hand, lectures

    engine = lectures.MlpStepT4(chaingrad)
    floor = by_hand.MlpStepT4Numpy(chaingrad)
    floor.batches = lambda: chaingrad.randint(0, len(floor.X), (floor.batch,),
                                              generator=floor.generator).numpy()
    for _ in range(5):
        engine.step()
        floor.step()
        assert floor.loss == pytest.approx(engine.loss.item(), rel=1e-5)
    for mine, theirs in zip((floor.C, floor.W1, floor.b1, floor.W2, floor.b2),
                            engine.parameters):
        np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("workload", ["T5", "T6", "T7"])
def test_the_gpt_steps_by_hand_in_numpy_are_the_steps_chaingrad_takes(workload):
    """The GPT floor rows are the steps they claim to be: given chaingrad's batches and
    dropout masks (replayed from its generator), the numpy program gives chaingrad's
    gradients, losses and parameters. Measured at batch 4: gradients within 9.0e-7 of each
    parameter's largest (1e-5 asked), losses within 1.2e-7 relative (1e-6 asked), weights
    after three AdamW steps within 4.9e-5 (2e-4 asked: AdamW's m / sqrt(v) magnifies float32
    rounding where a gradient is near 0; a wrong gradient moves a weight by about lr, 1e-3,
    a step)."""
    from workloads import by_hand, lectures

    engine = lectures.STEPS[workload](chaingrad, batch=4)
    floor = by_hand.GPT_FLOORS[workload](chaingrad, batch=4)
    p = engine.c["dropout"]
    floor.batches = lambda: tuple(t.numpy() for t in engine.next_batch())
    floor.keep = lambda shape: chaingrad.nn.functional.dropout(chaingrad.ones(shape), p).numpy()
    theirs = dict(engine.model.named_parameters())
    start = chaingrad.get_rng_state()
    _, loss = engine.model(*engine.next_batch())
    loss.backward()
    chaingrad.set_rng_state(start)
    idx, targets = floor.batches()
    floor.forward(idx.reshape(-1), targets.reshape(-1))
    floor.backward(idx.reshape(-1))
    assert floor.loss == pytest.approx(loss.item(), rel=1e-6)
    for name, (key, first, stop) in floor.names.items():
        grad = theirs[name].grad.numpy()
        assert np.abs(floor.g[key][first:stop] - grad).max() <= 1e-5 * np.abs(grad).max(), name
    engine.optimizer.zero_grad(set_to_none=True)
    for _ in range(3):
        start = chaingrad.get_rng_state()
        engine.step()
        after = chaingrad.get_rng_state()
        chaingrad.set_rng_state(start)
        floor.step()
        assert np.array_equal(chaingrad.get_rng_state().numpy(), after.numpy())  # same draws
        assert floor.loss == pytest.approx(engine.loss.item(), rel=1e-6)
    for name, mine in floor.named_parameters():
        np.testing.assert_allclose(mine, theirs[name].detach().numpy(), rtol=0, atol=2e-4,
                                   err_msg=name)


def test_the_gpt_steps_by_hand_take_erf_within_2_ulps_of_math_erf():
    """GELU's erf in the floor rows (degree 7 where chaingrad's is of degree 10) is as
    accurate as chaingrad's on the points of chaingrad's own erf test."""
    from workloads import by_hand

    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-6, 6, 20_001), rng.standard_normal(5_000) * 4,
                        [0.0, -0.0, 1e-30, -1e-30, 1e-5, 7.0, -30.0]]).astype(np.float32)
    ours = np.empty_like(x)
    by_hand.erf_into(x, ours, np.empty_like(x))
    exact = np.array([math.erf(float(v)) for v in x]).astype(np.float32)
    spacing = np.spacing(np.abs(exact)).astype(np.float64)
    assert np.max(np.abs(ours.astype(np.float64) - exact) / spacing) <= 2
    assert np.array_equal(np.signbit(ours), np.signbit(x))


def test_the_lstm_lm_step_by_hand_in_numpy_is_the_step_chaingrad_takes(monkeypatch):
    """lstm_lm_step.py's "numpy (by hand)" row is the step it claims to be: from the chaingrad
    model's weights, on the same batches, the hidden state carried, the numpy program gives
    chaingrad's losses, gradients and weights, step after step (clipped to a norm of 0.01,
    so that the clip bites: the benchmark's 0.25 does not in its first steps). Measured over
    four steps: losses within 1.4e-7 relative (1e-6 asked), gradients within 1.2e-6 of each
    parameter's largest (1e-5 asked), weights within 1.2e-7 (2e-6 asked), the hidden state
    carried within 1.8e-7 (1e-6 asked)."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # as importing the script sets it; undone afterwards
    import lstm_lm_step
    from workloads import by_hand

    clip = 0.01
    model, optimizer, batches, hidden = lstm_lm_step.build(chaingrad, 4)
    floor = by_hand.LstmLmByHand(model, lstm_lm_step.BATCH, lstm_lm_step.BPTT,
                                 lstm_lm_step.LR, clip)
    clipped = []
    for batch in batches:  # lstm_lm_step.train_step, the gradients looked at before the clip
        tokens = batch.numpy()
        floor.hs[:, 0], floor.cs[:, 0] = floor.hs[:, -1], floor.cs[:, -1]
        floor.forward(tokens[:-1].reshape(-1), tokens[1:].reshape(-1))
        floor.backward(tokens[:-1].reshape(-1))
        hidden = tuple(h.detach() for h in hidden)
        optimizer.zero_grad()
        output, hidden = model(batch[:-1], hidden)
        loss = chaingrad.nn.functional.cross_entropy(output, batch[1:].reshape(-1))
        loss.backward()
        assert floor.loss == pytest.approx(loss.item(), rel=1e-6)
        for name, p in model.named_parameters():
            grad = p.grad.numpy()
            assert np.abs(floor.g[name] - grad).max() <= 1e-5 * np.abs(grad).max(), name
        clipped.append(chaingrad.nn.utils.clip_grad_norm_(model.parameters(), clip).item())
        optimizer.step()
        floor.update()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(floor.w[name], p.detach().numpy(), rtol=0, atol=2e-6,
                                       err_msg=name)
    assert min(clipped) > clip  # every step clipped
    h, c = (state.detach().numpy() for state in hidden)  # carried into the next step
    np.testing.assert_allclose(floor.hs[:, -1], h, rtol=0, atol=1e-6)
    np.testing.assert_allclose(floor.cs[:, -1], c, rtol=0, atol=1e-6)


def test_floor_matmuls_replays_the_products_of_a_step_by_hand():
    """floor_matmuls.py times the products a step by hand makes, every one of them, into
    the step's own arrays; the numpy child's figures come back whole."""
    import floor_matmuls

    _, calls = floor_matmuls.recorded_products("T5")
    assert len(calls) == 40  # 2 layers x (6 forward + 12 backward), 3 output, 1 embedding
    assert all(out is not None and np.matmul(a, b).shape == out.shape for a, b, out in calls)
    a, b, _ = calls[0]
    figures = floor_matmuls.measure("numpy", "T5", repeats=1)
    assert figures["count"] == 40 and figures["gelu"] is None
    assert min(figures["step"], figures["products"], figures["adamw"]) > 0
    assert sum(n for n, _ in figures["kinds"].values()) == 40
    assert floor_matmuls.kind(a, b) == "(512,64) @ (64,192)T"


def test_floor_matmuls_splits_the_lstm_lm_step_by_hand():
    """floor_matmuls.py --workload LSTM: every product of lstm_lm_step.py's step by hand,
    the recurrent ones step by step (2 layers x 35 forward, 34 backward)."""
    import floor_matmuls

    _, calls = floor_matmuls.recorded_products("LSTM")
    kinds = [floor_matmuls.kind(a, b) for a, b, _ in calls]
    assert len(calls) == 153  # 74 forward (2 + 70 + the decoder's 2), 3 + 2 x 38 backward
    assert kinds.count("(20,200) @ (200,800)") == 70 and kinds.count("(20,800) @ (800,200)") == 68
    figures = floor_matmuls.measure("numpy", "LSTM", repeats=1)
    assert figures["count"] == 153 and figures["gelu"] is None
    assert min(figures["step"], figures["products"], figures["adamw"]) > 0


def test_steady_heap_fixes_mallocs_thresholds_in_the_timing_workers_only():
    import versions

    remote = contest.Remote(sys.executable, "chaingrad", False, "S1", QUICK, None, None,
                            env=versions.STEADY_HEAP)
    try:
        environ = Path(f"/proc/{remote.proc.pid}/environ").read_bytes().split(b"\0")
    finally:
        remote.close()
    for name, value in versions.STEADY_HEAP.items():
        assert f"{name}={value}".encode() in environ
        assert name not in os.environ  # this process's own malloc is left as it was
    assert versions.parse_args(["--before", str(ROOT), "--after", str(ROOT),
                                "--steady-heap"]).steady_heap
    assert not versions.parse_args(["--before", str(ROOT), "--after", str(ROOT)]).steady_heap


def test_a_worker_imports_chaingrad_from_the_tree_it_is_given(micrograd_tree):
    remote = contest.Remote(sys.executable, "chaingrad", False, "S1", QUICK, None, None,
                            path=str(micrograd_tree), clock="cpu")
    try:
        assert remote.file == str(micrograd_tree / "chaingrad" / "__init__.py")
        assert min(remote.block().values()) > 0
    finally:
        remote.close()
    reply = contest.probe(sys.executable, "chaingrad", "tracemalloc", QUICK,
                          path=str(micrograd_tree))
    assert reply["ok"] and reply["file"] == remote.file and reply["tracemalloc B/node"] > 0


@pytest.mark.slow
def test_versions_quick_run_compares_both_trees(tmp_path):
    out, md = tmp_path / "versions.json", tmp_path / "versions.md"
    # a workload of each kind: moons data sent to the workers and compiled there, S3's
    # memory probes, the digits sent to a tensor worker (run.py's quick run has them all)
    done = _run("--before", str(ROOT), "--after", ".", "--quick", "--repeats", "2",
                "--processes", "2", "--only", "S2c,S3,T2", "--json", str(out),
                "--markdown", str(md), script=VERSIONS)
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    assert (payload["repeats"], payload["processes"], payload["clock"]) == (2, 2, "cpu")
    package = str(ROOT / "chaingrad" / "__init__.py")
    for side in ("before", "after"):
        assert payload["trees"][side]["dir"] == str(ROOT)
        assert payload["trees"][side]["chaingrad_files"] == [package]
        assert f"{side}: chaingrad imported from {package}" in done.stdout
    sizes = suite.SIZES["quick"]
    keys = ["S2c", "S3"] + [key for key, _, _ in suite.tensor_runs("T2", sizes)]
    results = {(r["workload"], r["metric"]): r for r in payload["results"]}
    assert list(results) == [(key, m) for key in keys
                             for m in suite.METRICS[key if key == "S2c" else key[:2]]]
    titles = suite.titles(sizes)
    for (key, metric), result in results.items():
        for side in ("before", "after"):
            samples = result[side]["samples"]
            assert len(samples) == (1 if metric.endswith("B/node") else 2)
            assert result[side]["median"] >= 0 if metric == "rss B/node" else min(samples) > 0
        if metric != "rss B/node":  # a tiny graph can fit in pages the process already had
            assert result["ratio"] == pytest.approx(result["after"]["median"]
                                                     / result["before"]["median"])
        table = done.stdout[done.stdout.index(titles[key]):]
        line = next(line for line in table.splitlines() if line.strip().startswith(metric))
        assert len(line.split()) - len(metric.split()) == (3 if "B/node" in metric else 5)
    assert "python benchmarks/versions.py --before" in md.read_text()
    assert "after/before" in md.read_text() and "below 1, after is faster" in done.stdout


def test_versions_runs_each_side_in_its_own_tree(micrograd_tree):
    done = _run("--before", str(ROOT), "--after", str(micrograd_tree), "--only", "S1",
                "--quick", "--repeats", "1", script=VERSIONS)
    assert done.returncode == 0, done.stderr
    assert f"before: chaingrad imported from {ROOT / 'chaingrad' / '__init__.py'}" in done.stdout
    assert (f"after: chaingrad imported from {micrograd_tree / 'chaingrad' / '__init__.py'}"
            in done.stdout)


@pytest.mark.parametrize("args, message", [
    (["--before", "."], "the following arguments are required: --after"),
    (["--before", ".", "--after", "benchmarks"], "--after: expected a source tree"),
    (["--before", ".", "--after", ".", "--only", "S1,S9"], "--only: unknown workload"),
    (["--before", ".", "--after", ".", "--repeats", "0"], "--repeats: must be >= 1"),
    (["--before", ".", "--after", ".", "--processes", "0"], "--processes: must be >= 1"),
    (["--before", ".", "--after", ".", "--clock", "sun"], "--clock: invalid choice"),
])
def test_versions_bad_command_line_is_one_line_and_exit_2(scripts, capsys, monkeypatch, args,
                                                          message):
    monkeypatch.chdir(ROOT)
    (line,) = _usage_error(scripts, capsys, VERSIONS, *args)
    assert message in line


@pytest.mark.slow
def test_conv_benchmark_quick_run_times_both_engines(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "conv.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "conv.py"), "--quick",
                           "--runs", "1", "--budget", "0.01", "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "cg/torch" in done.stdout and "quick conv" in done.stdout
    results = json.loads(out.read_text())["results"]
    for engine in ("chaingrad", "torch"):
        for case in results[engine].values():
            assert set(case) == {"fwd", "bwd"}
            assert all(phase["median"] > 0 for phase in case.values())
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "conv.py"), "--runs", "0"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "--runs must be >= 1" in bad.stderr


@pytest.mark.slow
def test_ops_benchmark_quick_run_times_every_case_on_both_engines(tmp_path):
    pytest.importorskip("torch")
    import ops

    out = tmp_path / "ops.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ops.py"), "--quick",
                           "--runs", "1", "--budget", "0.002", "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "cg/torch" in done.stdout
    results = json.loads(out.read_text())["results"]
    for engine in ("chaingrad", "torch"):
        assert list(results[engine]) == [case.name for case in ops.CASES]
        for by_size in results[engine].values():
            assert list(by_size) == ["4x6"]
            assert set(by_size["4x6"]) == {"fwd", "fwd+bwd"}
            assert all(phase["median"] > 0 for phase in by_size["4x6"].values())


@pytest.mark.slow
def test_updates_benchmark_times_each_case_on_both_engines():
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "updates.py"), "--runs",
                           "1", "--budget", "0.002"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()[1:]
    assert [row.split("  ")[0].strip() for row in rows] == [
        "x += y", "p.data += -lr * p.grad", "clip_grad_norm_"]
    assert all("chaingrad/torch" in row for row in rows)


@pytest.mark.parametrize("args, message", [(["--runs", "0"], "--runs must be >= 1"),
                                           (["--only", "tan"], "--only: unknown case 'tan'"),
                                           (["--sizes", "32by200"], "--sizes: expected sizes")])
def test_ops_benchmark_refuses_a_bad_command_line(args, message):
    done = _run(*args, script=ROOT / "benchmarks" / "ops.py")
    assert done.returncode == 2 and done.stdout == ""
    assert message in done.stderr and len(done.stderr.splitlines()) == 1


def test_ops_benchmark_times_every_primitive():
    """Each primitive of both rule tables is in some case of ops.py (or in conv.py's)."""
    import ops

    from chaingrad import rules
    from chaingrad.tensor_engine import rules as tensor_rules

    timed = {name for case in ops.CASES for name in case.primitives} | set(ops.ELSEWHERE)
    declared = {p.name for p in rules.PRIMITIVES + tensor_rules.PRIMITIVES}
    assert declared <= timed, f"ops.py times no case of {sorted(declared - timed)}"
    assert timed <= declared, f"ops.py names primitives that are not: {sorted(timed - declared)}"


@pytest.mark.parametrize("name", [case.name for case in __import__("ops").CASES
                                  if not case.random])
def test_each_ops_case_computes_the_same_numbers_on_both_engines(torch, name):
    """Both engines time the same computation: the same output, and the same gradients."""
    import numpy as np
    import ops

    (case,) = [case for case in ops.CASES if case.name == name]
    results = []
    for engine in (chaingrad, torch):
        call, inputs = ops.prepared(engine, case, 6, 20)
        out = call()
        out.backward(engine.from_numpy(np.linspace(-1, 1, out.numel(), dtype=np.float32)
                                       .reshape(tuple(out.shape))))
        results.append([out.detach().numpy()] + [None if x.grad is None else x.grad.numpy()
                                                  for x in inputs if x.requires_grad])
    for ours, theirs in zip(*results, strict=True):
        assert (ours is None) == (theirs is None)  # an input used for its shape only
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-5)


def test_medians_of_runs_take_the_middle_time_and_ratio() -> None:
    import medians

    def run(time: float, ratio: float) -> dict:
        return {"results": [
            {"workload": "S2", "label": "micrograd", "status": "ok",
             "metrics": {"ms/step": {"median": time, "ratio_to_chaingrad": ratio}}},
            {"workload": "S2", "label": "other", "status": "RecursionError", "metrics": {}}]}

    (line,) = medians.medians([run(700.0, 16.0), run(2100.0, 18.0), run(760.0, 17.0)])
    assert line.split()[:4] == ["S2", "micrograd", "ms/step", "760"]
    assert "spread 184%" in line and "17.00x (16.00-18.00)" in line and "runs 3" in line


def test_medians_of_version_runs_take_the_middle_ratio_and_show_each() -> None:
    import medians

    def run(before: float, after: float) -> dict:
        return {"trees": {}, "results": [
            {"workload": "S2", "metric": "ms/step", "before": {"median": before},
             "after": {"median": after}, "ratio": after / before}]}

    header, line = medians.version_medians([run(100.0, 110.0), run(100.0, 95.0),
                                            run(120.0, 120.0)])
    assert header.split()[:4] == ["workload", "metric", "before", "after"]
    assert line.split()[:5] == ["S2", "ms/step", "100", "110", "1.000"]
    assert "(runs: 1.100, 0.950, 1.000)" in line


@pytest.mark.slow
def test_profile_s2_splits_a_step_into_its_phases():
    """The README's `python benchmarks/profile_s2.py`, one step: each phase has a figure."""
    done = _run("--steps", "1", script=ROOT / "benchmarks" / "profile_s2.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("chaingrad S2 step: ") and "graph nodes" in lines[0]
    for phase in ("forward: the model", "backward: all of it", "backward: topological order",
                  "SGD update", "of which the collector"):
        assert any(line.strip().startswith(phase) and " ms" in line for line in lines), phase


@pytest.mark.slow
def test_profile_gpt_puts_a_step_beside_torchs_by_op_type(torch):
    """The README's `python benchmarks/profile_gpt.py`, one step of T6: a plain step of each
    engine, then a row per op type (layer_norm and gelu among them) with both engines'."""
    done = _run("--steps", "1", script=ROOT / "benchmarks" / "profile_gpt.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("T6: a plain step") and "chaingrad / torch" in lines[0]
    rows = {line[:32].strip(): line[32:].split() for line in lines[3:]}
    for name in ("layer_norm", "gelu", "matmul (Linear, attention)", "optimizer step", "total"):
        assert len(rows[name]) == 3 and float(rows[name][0]) > 0, name


# ---- a run that did not do what was asked fails loudly (issue 31, item 6) ----


@pytest.mark.parametrize("workload", [w for w in suite.WORKLOADS if w.startswith("T")])
def test_a_worker_builds_every_tensor_workload(workload):
    """versions.py times the tensor workloads in workers: each must be known to them."""
    from workloads import worker

    _, batch, steps = suite.tensor_runs(workload, suite.SIZES["quick"])[0]
    sizes = dict(suite.SIZES["quick"], batch=batch, steps=steps)
    work = worker.build(engines.make("chaingrad"), workload, sizes)
    assert set(work.block()) == set(suite.METRICS[workload])


def test_versions_times_the_lectures_workloads_in_both_trees(tmp_path):
    out = tmp_path / "versions.json"
    done = _run("--before", ".", "--after", ".", "--quick", "--only", "T4,T5,T6", "--repeats", "1",
                "--processes", "1", "--json", str(out), script=VERSIONS)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())["results"]
    assert [r["workload"] for r in results] == ["T4", "T5", "T6"]
    assert all(r["before"]["median"] > 0 and r["after"]["median"] > 0 for r in results)


def test_versions_exits_1_naming_a_workload_that_did_not_run(micrograd_tree, tmp_path):
    """A tree without Tensor (micrograd's, here) cannot run T3: the table says why, stderr
    names the workload in one line, and the exit status is 1; the results are still written."""
    out = tmp_path / "versions.json"
    done = _run("--before", str(ROOT), "--after", str(micrograd_tree), "--only", "S1,T3",
                "--quick", "--repeats", "1", "--processes", "1", "--json", str(out),
                script=VERSIONS)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == ["versions.py: did not run: T3 (after)"]
    assert "after: not run: " in done.stdout
    results = json.loads(out.read_text())["results"]
    assert list(dict.fromkeys(r["workload"] for r in results)) == ["S1", "T3"]


def test_run_exits_1_when_chaingrad_did_not_run_a_workload(tmp_path):
    """S2 needs scikit-learn's moons: without it chaingrad's row is not run, and run.py says
    so and fails (a competitor that is not installed is only skipped: see above)."""
    done = _run("--quick", "--only", "S1,S2", "--repeats", "1",
                env=_hide(tmp_path, "sklearn", "torch", "micrograd"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == ["run.py: did not run: S2 (chaingrad)"]
    assert "S1: scalar chain" in done.stdout  # the other workloads still ran


@pytest.mark.parametrize("script", [CONV, OPS])
@pytest.mark.parametrize("baseline", ["/nonexistent", "benchmarks"])
def test_a_baseline_that_is_not_a_chaingrad_tree_is_refused(scripts, capsys, monkeypatch,
                                                          script, baseline):
    monkeypatch.chdir(ROOT)
    assert _usage_error(scripts, capsys, script, *SMALLEST_RUNS[script], "--baseline",
                        baseline) == [
        f"{script.name}: --baseline: expected a source tree holding chaingrad/__init__.py, "
        f"got {baseline!r}"]


@pytest.mark.parametrize("content, problem", [
    (None, "no such file"),
    ("not json", "not JSON"),
    ("[1, 2]", "not a --json file of run.py or versions.py"),
    ('{"results": [{"workload": "S1"}]}', "not a --json file of run.py or versions.py"),
])
def test_medians_of_a_bad_file_is_one_line_and_exit_2(tmp_path, content, problem):
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content)
    done = _run(str(path), script=ROOT / "benchmarks" / "medians.py")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"medians.py: {path}: {problem}"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_result_files_get_the_permissions_of_any_new_file(tmp_path):
    """Written atomically, yet readable by others as open() would leave it (umask 022: 0644);
    a file written over keeps its own mode."""
    old_umask = os.umask(0o022)
    try:
        report.write_json(str(tmp_path / "run.json"), {"results": []})
        (tmp_path / "page.md").write_text("old")
        (tmp_path / "page.md").chmod(0o600)
        report.write_text(str(tmp_path / "page.md"), "new")
    finally:
        os.umask(old_umask)
    assert (tmp_path / "run.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "page.md").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "page.md").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["page.md", "run.json"]  # no temporary file left


def test_the_results_folder_of_the_readmes_commands_is_ignored_by_git():
    """benchmarks/README.md writes every result file into benchmarks/results/, which exists
    in a checkout and whose files git ignores."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    outputs = re.findall(r"--(?:json|markdown) ([\w./-]+\.(?:json|md))\b", text)
    assert outputs and all(o.startswith("benchmarks/results/") or o == "benchmarks/RESULTS.md"
                           for o in outputs), outputs
    assert (ROOT / "benchmarks" / "results").is_dir()
    for output in outputs:
        ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index",
                                  output], timeout=60)
        assert ignored.returncode == (1 if output == "benchmarks/RESULTS.md" else 0), output
