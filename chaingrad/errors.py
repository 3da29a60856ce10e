"""The exceptions chaingrad raises, all in one place."""


class DomainError(ValueError):
    """An operation was asked for a value outside its mathematical domain.

    The message names the op, what it needs and what it got, e.g.
    ``log: got 0.0, needs x > 0``.
    """


class GradcheckError(RuntimeError):
    """``gradcheck`` found an analytic gradient that disagrees with finite differences."""


class CompileCheckError(RuntimeError):
    """``chaingrad.compile(fn, check=True)`` found the compiled code and the eager function
    disagreeing: the message names the first node that differs."""


# ---- the command line ----


class UsageError(Exception):
    """A bad command line: ``chaingrad`` prints it as one line and exits with code 2."""


class DivergedError(Exception):
    """A demo's training diverged; the message says when and how, e.g.
    ``training diverged at step 2/5 (the loss overflowed)``."""


class ExpressionError(ValueError):
    """An expression for ``chaingrad graph`` that is outside its language or cannot be
    computed; the message names what was found."""
