"""Grad mode: whether ops record the graph, as PyTorch's ``no_grad``, ``enable_grad``,
``set_grad_enabled`` and ``inference_mode`` set it, per thread.

Example:
    >>> from chaingrad import Value, no_grad
    >>> with no_grad():
    ...     (Value(2.0) * 3)._prev
    ()
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

Decorated = TypeVar("Decorated", bound=Callable[..., Any])
"""A function that a grad mode decorates, whose type the decorated one keeps."""

everywhere = True
"""True while no thread is inside ``no_grad()``: then every op records, and reading this
one module global is all an op pays for grad mode (``gradmode.everywhere or
gradmode.is_grad_enabled()``). Otherwise each thread's own mode decides, as PyTorch's
per-thread mode does."""

_mode = threading.local()  # .enabled: this thread's mode, once it has set one; .inference
_threads_off = 0  # how many threads have recording off now
_mode_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """True when ops record the graph in this thread (the default), False in ``no_grad()``."""
    return everywhere or getattr(_mode, "enabled", True)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` in this thread (torch's name)."""
    return getattr(_mode, "inference", False)


def _set_grad_enabled(enabled: bool) -> bool:
    """Set this thread's grad mode; returns the mode it had."""
    global _threads_off, everywhere
    with _mode_lock:
        previous = getattr(_mode, "enabled", True)
        if previous != enabled:
            _threads_off += -1 if enabled else 1
        _mode.enabled = enabled
        everywhere = _threads_off == 0
    return previous


class _GradMode:
    """A context manager and decorator that sets this thread's grad mode, as torch's do.

    As a decorator it also works on generator functions: the mode holds while the
    generator's body runs, each time it is resumed, and not between (PyTorch's behaviour).
    """

    enabled: bool

    def __init__(self) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(_set_grad_enabled(self.enabled))

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous.pop())

    def _again(self) -> _GradMode:
        """A fresh context of the same kind, for each call of a decorated function."""
        return type(self)()

    def __call__(self, fn: Decorated) -> Decorated:
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}(): decorates a function, got "
                            f"{type(fn).__name__}")
        mode = self._again
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                sent: Any = None
                while True:
                    try:
                        with mode():
                            item = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
                    sent = yield item
            return cast(Decorated, generator)  # fn's signature: functools.wraps

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with mode():
                return fn(*args, **kwargs)
        return cast(Decorated, call)


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """A context under which ops compute values but record no graph.

    Also a decorator (``@no_grad()``), generator functions included. As in PyTorch, the
    mode belongs to the thread that enters it: other threads go on recording.

    Example:
        >>> from chaingrad import Value, no_grad
        >>> with no_grad():
        ...     y = Value(2.0) * 3
        >>> y._prev
        ()
    """

    enabled = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn graph recording back on in this thread, e.g. inside a ``no_grad()`` block."""

    enabled = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Set this thread's grad mode: ``set_grad_enabled(False)`` as a call (it stays so) or
    as a context manager or decorator (restored after), as torch's.

    Example:
        >>> from chaingrad import Value
        >>> with set_grad_enabled(False):
        ...     (Value(2.0) * 3)._prev
        ()
    """

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self.enabled = bool(mode)
        self._previous.append(_set_grad_enabled(self.enabled))

    def __enter__(self) -> None:
        pass  # set already, by the call

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous.pop())

    def __call__(self, fn: Decorated) -> Decorated:
        _set_grad_enabled(self._previous.pop())  # as a decorator: only while fn runs
        enabled = self.enabled

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(enabled):
                return fn(*args, **kwargs)
        return cast(Decorated, call)


class inference_mode(_GradMode):  # noqa: N801 - PyTorch's name
    """``no_grad()`` under PyTorch's name for running a model without training it:
    ``inference_mode()`` (or ``inference_mode(True)``) records no graph and makes
    ``is_inference_mode_enabled()`` True; ``inference_mode(False)`` turns both back
    (recording on). A context manager and a decorator, with or without the parentheses.

    torch's inference mode also marks the tensors made under it as "inference tensors" that
    a later graph refuses; chaingrad's are ordinary tensors without a graph, as under
    ``no_grad()``: what runs under torch's inference mode runs the same here.

    Example:
        >>> from chaingrad import Value, inference_mode, is_inference_mode_enabled
        >>> with inference_mode():
        ...     y = Value(2.0) * 3
        ...     inside = is_inference_mode_enabled()
        >>> y._prev, inside, is_inference_mode_enabled()
        ((), True, False)
        >>> @inference_mode
        ... def predict(x):
        ...     return x * 2
        >>> predict(Value(1.0))._prev
        ()
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # @inference_mode, without the parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = bool(mode)
        self.enabled = not self.mode
        self._inference: list[bool] = []

    def __enter__(self) -> None:
        self._inference.append(is_inference_mode_enabled())
        _mode.inference = self.mode
        super().__enter__()

    def __exit__(self, *exc_info: object) -> None:
        super().__exit__(*exc_info)
        _mode.inference = self._inference.pop()

    def _again(self) -> inference_mode:
        return inference_mode(self.mode)


# ---- anomaly mode: torch's detect_anomaly, on by default (chaingrad/anomaly.py) ----

anomaly_checks = True
"""Whether ``backward()`` on Tensors checks its loss and gradients for nan and inf (once
per pass) and raises ``AnomalyError`` naming the op that made one: torch's anomaly
detection with ``check_nan``, on by default here because it is free while the numbers are
finite. ``set_detect_anomaly(False)`` turns it off: nan and inf then flow, as in torch."""

anomaly_enabled = True
"""``is_anomaly_enabled()``: True unless ``set_detect_anomaly(False)``."""

anomaly_traced = False
"""Whether each op records the lines that made it, for the error to show: only under
``set_detect_anomaly(True)`` or ``detect_anomaly()``, as torch's (never by default: it
costs a stack walk per op)."""


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (torch's name): True by default in chaingrad, where
    it costs nothing on finite numbers; False after ``set_detect_anomaly(False)``."""
    return anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection raises on a nan or inf (torch's ``check_nan``)."""
    return anomaly_checks


def _set_anomaly(enabled: bool, check_nan: bool, traced: bool) -> tuple[bool, bool, bool]:
    """Set the anomaly mode; returns the one it had (for ``_set_anomaly(*previous)``)."""
    global anomaly_enabled, anomaly_checks, anomaly_traced
    previous = anomaly_enabled, anomaly_checks, anomaly_traced
    anomaly_enabled, anomaly_checks, anomaly_traced = enabled, enabled and check_nan, traced
    return previous


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``set_detect_anomaly(enabled, check_nan)`` as a plain call (torch's name)."""
    _set_anomaly(bool(enabled), bool(check_nan), bool(enabled))


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off, as torch's: as a call (it stays so) or as a
    context manager (restored after).

    ``set_detect_anomaly(False)`` gives torch's default: ``backward()`` lets nan and inf
    flow into ``.grad`` without a word. ``set_detect_anomaly(True)`` is chaingrad's default
    check plus, as in torch, each op recording the lines that made it, which the
    ``AnomalyError`` then shows (a cost per op: for debugging). ``check_nan=False`` keeps
    the recording but raises nothing.

    Example:
        >>> import chaingrad as torch
        >>> x = torch.tensor([0.0], requires_grad=True)
        >>> with torch.autograd.set_detect_anomaly(False):
        ...     x.log().sum().backward()
        >>> x.grad
        tensor([inf])
        >>> torch.autograd.is_anomaly_enabled()
        True
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.previous = _set_anomaly(bool(mode), bool(check_nan), bool(mode))

    def __enter__(self) -> None:
        pass  # set already, by the call

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(*self.previous)


class detect_anomaly(_GradMode):  # noqa: N801 - PyTorch's name
    """A context manager (and decorator, as the grad modes: ``_GradMode``) under which
    anomaly detection is on, with each op recording the lines that made it:
    ``set_detect_anomaly(True, check_nan)`` for a block, as torch's ``detect_anomaly``.

    Example:
        >>> import chaingrad as torch
        >>> x = torch.tensor([0.0], requires_grad=True)
        >>> with torch.autograd.detect_anomaly():
        ...     x.log().sum().backward()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        chaingrad.errors.AnomalyError: log: input 0 is 0.0 at [0] ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._modes: list[tuple[bool, bool, bool]] = []

    def __enter__(self) -> None:
        self._modes.append(_set_anomaly(True, self.check_nan, True))

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(*self._modes.pop())

    def _again(self) -> detect_anomaly:
        return detect_anomaly(self.check_nan)
