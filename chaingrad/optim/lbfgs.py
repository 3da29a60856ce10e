"""L-BFGS (torch.optim.lbfgs): a quasi-Newton method that takes each step along a direction
from the last gradients and steps, and the optimizer ``LBFGS`` that runs it on a closure.

The pieces are pure functions with torch's pseudo-code: ``lbfgs_direction`` (the two-loop
recursion over the history), ``cubic_interpolate`` (the minimum of the cubic through two
points and their slopes) and ``strong_wolfe`` (torch's line search, which brackets a step
meeting the strong Wolfe conditions and zooms in on it by cubic interpolation). ``LBFGS``
flattens every parameter's numbers into one vector, as torch does, and keeps its state on
the first parameter (``state[params[0]]``) under torch's keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from numbers import Real
from typing import Any

from ..engine import Value
from ..errors import NonFiniteGradError
from ..gradmode import enable_grad
from ..guards import is_finite
from .optimizer import Optimizer, write_parameter

__all__ = ["LBFGS", "cubic_interpolate", "lbfgs_direction", "strong_wolfe"]


def lbfgs_direction(g: Any, old_dirs: list[Any], old_stps: list[Any], ro: list[Any],
                    H_diag: Any, al: list[Any]) -> tuple[Any, list[Any]]:  # noqa: N803
    """The L-BFGS direction ``d = -H g`` by the two-loop recursion, with ``y_i`` the
    changes of gradient (``old_dirs``), ``s_i`` the steps (``old_stps``), oldest first,
    ``ro_i = 1 / (y_i . s_i)`` and ``H_diag`` the scale of the initial inverse Hessian::

        q = -g
        for i from newest to oldest:  al_i = ro_i * (s_i . q);  q = q - al_i * y_i
        r = H_diag * q
        for i from oldest to newest:  be_i = ro_i * (y_i . r);  r = r + (al_i - be_i) * s_i
        d = r

    ``al`` is torch's list of the ``al_i`` (``history_size`` long, ``None`` where unused);
    a new list is returned with them.

    Example:
        >>> import numpy as np
        >>> d, al = lbfgs_direction(np.array([1.0, 2.0]), [], [], [], 0.5, [None])
        >>> d, al
        (array([-0.5, -1. ]), [None])
    """
    al = list(al)
    q = -g
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q = q + old_dirs[i] * -al[i]
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r = r + old_stps[i] * (al[i] - be_i)
    return r, al


def cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                      bounds: tuple[Any, Any] | None = None) -> Any:
    """Where the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1`` and ``g2``
    has its minimum, clamped to ``bounds`` (by default, the interval between x1 and x2)::

        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        d2 = sqrt(d1**2 - g1 * g2)        (if negative: no minimum, the bounds' midpoint)
        x = x2 - (x2 - x1) * (g2 + d2 - d1) / (g2 - g1 + 2 * d2)     (x1 <= x2; else mirrored)

    Example:
        >>> cubic_interpolate(0.0, 1.0, -2.0, 2.0, 1.0, 2.0)   # (x - 1)**2: its minimum
        1.0
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, low), high)


def strong_wolfe(evaluate: Callable[[Any], tuple[float, Any]], t: Any, d: Any, f: float,
                 g: Any, gtd: Any, c1: float = 1e-4, c2: float = 0.9,
                 tolerance_change: float = 1e-9, max_ls: int = 25,
                 ) -> tuple[float, Any, Any, int]:
    """torch's line search along ``d`` from the point where the loss is ``f``, its
    gradient ``g`` and its slope along d ``gtd = g . d``: a step ``t`` meeting the strong
    Wolfe conditions, with ``evaluate(t)`` the loss and gradient at ``x + t * d``::

        sufficient decrease:  f(t) <= f + c1 * t * gtd
        curvature:            |g(t) . d| <= -c2 * gtd

        bracket: from t, while neither holds nor is passed, try
                 t = cubic_interpolate(t_prev, t) within [t + 0.01 (t - t_prev), 10 t]
        zoom:    until the bracket is narrower than tolerance_change (in x), try its
                 cubic minimum (kept a tenth of the bracket from either end), and keep
                 the half that holds a point meeting both conditions
        return the bracket's best point: (f(t), g(t), t, evaluations)

    At most ``max_ls`` evaluations are made.

    Example:
        >>> import numpy as np
        >>> evaluate = lambda t: ((1 - t) ** 2, np.array([2 * (t - 1)]))  # x + t * d
        >>> f, g, t, evals = strong_wolfe(evaluate, 3.0, np.array([1.0]), 1.0,
        ...                               np.array([-2.0]), -2.0)
        >>> float(t), evals   # t = 3 overshoots; the cubic through 0 and 3 finds 1
        (1.0, 2)
    """
    d_norm = abs(d).max()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket, bracket_f, bracket_g, bracket_gtd = [], [], [], []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        t_prev, t = t, cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                         bounds=(t + 0.01 * (t - t_prev), t * 10))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # no bracket found in max_ls tries: between 0 and the last t
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom into the bracket
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                              bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too near an end of the bracket is moved a tenth of it inside, the
        # second time in a row (or at once, at or outside an end)
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new  # too high: the new high end
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:  # the old low end goes high
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS (torch.optim.LBFGS): each ``step(closure)`` runs up to ``max_iter``
    iterations, each along ``lbfgs_direction`` from the last ``history_size`` gradient
    changes and steps, with a fixed step ``lr`` (the first ever scaled down to at most
    ``lr / sum|g|``) or torch's ``strong_wolfe`` line search.

    Args:
        params: The parameters (one group only, as torch's).
        lr: The step length (>= 0; default 1).
        max_iter: The most iterations per ``step()`` (default 20).
        max_eval: The most closure calls per ``step()`` (default ``max_iter * 5 // 4``).
        tolerance_grad: Stop when every entry of the gradient is at most this in size.
        tolerance_change: Stop when the loss, or every entry of a step, changes by less.
        history_size: How many past steps make the direction (default 100).
        line_search_fn: None (a fixed step) or ``"strong_wolfe"``.

    ``step(closure)`` needs the closure (which zeroes the gradients, computes the loss,
    calls ``backward()`` and returns the loss), calls it under grad mode as torch does, and
    returns its first loss. A nan or inf gradient stops it with ``NonFiniteGradError``,
    the parameters put back as they were when the step began.

    Example:
        >>> import chaingrad as torch
        >>> x = torch.nn.Parameter(torch.tensor([3.0, -2.0], dtype=torch.float64))
        >>> opt = torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((x - 1) ** 2).sum() + (x[0] * x[1]) ** 2
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)   # the first loss; then 12 iterations, each a closure call
        tensor(49., dtype=chaingrad.float64, grad_fn=<AddBackward0>)
        >>> [round(v, 4) for v in x.tolist()], opt.state[x]['n_iter']
        ([0.6823, 0.6823], 12)
    """

    _state_has_parameter_shape = False

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Refused after the first group, as torch's LBFGS refuses groups."""
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations on ``closure``'s loss (torch's
        algorithm, step for step) and return the loss ``closure`` gave first.

        Raises:
            NonFiniteGradError: A gradient is nan or inf; the parameters and the state
                are put back as they were when the step began.
        """
        state = self.state[self.param_groups[0]["params"][0]]
        before = dict(state)  # the step replaces its entries, never changes them in place
        try:
            return self._iterate(closure)
        except NonFiniteGradError:
            state.clear()
            state.update(before)
            raise

    def _iterate(self, closure: Callable[[], Any]) -> Any:
        """``step``'s iterations, torch's, on the flat vector of the parameters."""
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        params = group["params"]
        start = self._flat([p._value for p in params])  # to put back if a gradient is nan
        state = self.state[params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate() -> tuple[Any, float, Any]:
            """The closure's loss (as it returned it, and as a float) and flat gradient."""
            with enable_grad():
                loss = closure()
            number = float(loss.data if isinstance(loss, Value) else loss)
            return loss, number, self._flat_grad(start)

        def at(x: Any) -> Any:
            """Set the parameters to the flat vector ``x``; their numbers, as one vector
            again (``x`` itself unless the parameters' dtypes differ)."""
            self._set_flat(x)
            return self._flat([p._value for p in params])

        first_loss, loss, flat_grad = evaluate()
        evals = 1
        state["func_evals"] += 1
        if abs(flat_grad).max() <= tolerance_grad:  # optimal already
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")  # noqa: N806 - torch's name
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        x = start
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # the first iteration ever: steepest descent
                d, old_dirs, old_stps, ro, H_diag = -flat_grad, [], [], [], 1  # noqa: N806
            else:
                y, s = flat_grad - prev_flat_grad, d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs, old_stps, ro = old_dirs[1:], old_stps[1:], ro[1:]
                    old_dirs, old_stps, ro = old_dirs + [y], old_stps + [s], ro + [1.0 / ys]
                    H_diag = ys / y.dot(y)  # noqa: N806
                d, state["al"] = lbfgs_direction(flat_grad, old_dirs, old_stps, ro, H_diag,
                                                 state.get("al", [None] * history_size))
            prev_flat_grad, prev_loss = flat_grad.copy(), loss
            t = min(1.0, 1.0 / abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break
            if group["line_search_fn"] == "strong_wolfe":
                def along(step: Any, x: Any = x, d: Any = d) -> tuple[float, Any]:
                    at(x + d * step)
                    return evaluate()[1:]
                loss, flat_grad, t, line_evals = strong_wolfe(
                    along, t, d, loss, flat_grad, gtd, max_ls=max_eval - evals)
                x = at(x + d * t)
                optimal = abs(flat_grad).max() <= tolerance_grad
            else:
                x = at(x + d * t)
                line_evals = 0
                if n_iter != max_iter:  # the loss at the new point, for the next iteration
                    _, loss, flat_grad = evaluate()
                    line_evals = 1
                optimal = abs(flat_grad).max() <= tolerance_grad
            evals += line_evals
            state["func_evals"] += line_evals
            if (n_iter == max_iter or evals >= max_eval or optimal
                    or abs(d * t).max() <= tolerance_change
                    or abs(loss - prev_loss) < tolerance_change):
                break
        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro,
                      "H_diag": H_diag, "prev_flat_grad": prev_flat_grad,
                      "prev_loss": prev_loss})
        return first_loss

    def _flat(self, arrays: list[Any]) -> Any:
        """One vector of every parameter's numbers (or gradient's), in order."""
        import numpy as np

        return np.concatenate([np.reshape(a, -1) for a in arrays])

    def _set_flat(self, x: Any) -> None:
        """Write the flat vector ``x`` into the parameters, each its part in its shape."""
        offset = 0
        for p in self.param_groups[0]["params"]:
            if isinstance(p._value, Real):
                write_parameter(p, x[offset])
                offset += 1
            else:
                write_parameter(p, x[offset:offset + p._value.size].reshape(p._value.shape))
                offset += p._value.size

    def _flat_grad(self, start: Any) -> Any:
        """Every gradient as one vector (zeros for a parameter without one), checked; a
        nan or inf puts the parameters back to ``start`` and raises."""
        grads = []
        for p in self.param_groups[0]["params"]:
            g = p.grad
            if g is None:
                g = 0 * p._value
            elif hasattr(g, "_prev"):
                g = g._value
            grads.append(self._checked(p, g))
        flat = self._flat(grads)
        if not is_finite(flat):
            bad = next(p for p, g in zip(self.param_groups[0]["params"], grads)
                       if not is_finite(g))
            self._set_flat(start)
            raise NonFiniteGradError(
                f"LBFGS.step: the gradient of parameter {self._label(bad)} is not finite; "
                f"the parameters were put back as they were before the step{self._hint(bad)}")
        return flat
