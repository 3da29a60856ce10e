"""The exceptions chaingrad raises, all in one place."""

import pickle


class DomainError(ValueError):
    """An operation was asked for a value outside its mathematical domain.

    The message names the op, what it needs and what it got, e.g.
    ``log: got 0.0, needs x > 0``.
    """


class GradcheckError(RuntimeError):
    """``gradcheck`` found an analytic gradient that disagrees with finite differences."""


class LinAlgError(RuntimeError):
    """A linear-algebra function met a matrix it cannot work with (a singular one for
    ``chaingrad.linalg.inv`` or ``solve``): torch's ``torch.linalg.LinAlgError``."""


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


# ---- models and files ----


class ModelFileError(ValueError):
    """A model file that cannot be loaded: not safetensors, truncated, corrupt, or not
    holding the model it describes. The message names the file and what is wrong."""


NO_CUDA_LOAD = ("Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
                "please use torch.load with map_location=torch.device('cpu') to map your "
                "storages to the CPU.")
"""torch's words when a checkpoint's storages are on a GPU and there is none (chaingrad
has none): ``load`` says them too."""


class UnsafeGlobalError(pickle.UnpicklingError):
    """A ``weights_only`` load refused a file whose pickle names a global outside the allow
    list (torch raises ``pickle.UnpicklingError``, which this is). The message names the
    global and how to allow it; nothing of the file ran."""


class NotARegularFileError(OSError):
    """A path that names a FIFO, a device or a socket, where chaingrad reads or writes only
    regular files (``save(model, os.devnull)`` must never replace /dev/null). ``filename``
    is the path as given."""

    def __init__(self, message: str, filename: str | None = None):
        super().__init__(message)
        self.filename = filename

    def __str__(self) -> str:
        return str(self.args[0])


class NonFiniteGradError(ValueError):
    """``step()`` met a nan or inf gradient, or an update that would make one; no parameter
    was changed. ``what`` says which: ``"gradient"`` or ``"update"``."""

    def __init__(self, message: str, what: str = "gradient"):
        super().__init__(message)
        self.what = what


class NonFiniteNormError(RuntimeError):
    """``clip_grad_norm_(..., error_if_nonfinite=True)`` found the gradients' total norm nan
    or inf; no gradient was changed. A RuntimeError, as torch's."""


# ---- data loading ----


class DataLoaderWorkerError(RuntimeError):
    """A ``DataLoader`` worker process died (killed, out of memory) or sent nothing within
    the loader's ``timeout``. A RuntimeError, as torch's; the message names the worker."""


# ---- drawings ----


class RendererNotFoundError(RuntimeError):
    """No Graphviz renderer (a system ``dot`` or ``graphviz-pure``) could be found."""


# ---- inside the backward pass ----


class AnomalyError(RuntimeError):
    """``backward()`` on Tensors started from a loss that is not finite, or computed a
    gradient that is not finite: the message names the op that first made the nan or inf
    (its shapes, the first index, the input values there), or the leaf that held it.

    torch's anomaly detection (``torch.autograd.detect_anomaly``), on by default: it costs
    nothing while every number is finite. A RuntimeError, as torch's is;
    ``chaingrad.autograd.set_detect_anomaly(False)`` turns it off (nan and inf then flow
    into ``.grad`` silently, as in torch). ``node`` is the tensor the message is about,
    ``created_at`` the lines that made it (under ``set_detect_anomaly(True)``, else None).
    """

    def __init__(self, message: str, node: object = None, created_at: str | None = None):
        super().__init__(message)
        self.node = node
        self.created_at = created_at



# ---- torch's names and devices that chaingrad does not have ----


class TorchNameError(AttributeError):
    """A name of torch's that chaingrad does not have yet (``chaingrad has no 'fft' yet``),
    with what to write instead where chaingrad's ops compose it. An AttributeError, so that
    ``hasattr`` and ``getattr(torch, name, default)`` answer as they would for any absent
    attribute; never Python's own message, which may suggest a private name."""


class NoCudaError(NotImplementedError, AssertionError):
    """A GPU was asked for (``x.cuda()``, ``model.cuda()``, ``device="cuda"``,
    ``chaingrad.cuda.set_device(0)``): chaingrad computes on the CPU only. torch's CPU build
    raises an AssertionError ("Torch not compiled with CUDA enabled") there, and this is one
    too; a NotImplementedError (a RuntimeError) as well, as chaingrad's error for a missing
    feature."""


class SingleProcessError(RuntimeError):
    """A multi-process API (``chaingrad.distributed.init_process_group``,
    ``DistributedDataParallel``) was used: chaingrad runs in one process. The message says
    that the program's multi-process path runs on PyTorch with the imports changed back."""
