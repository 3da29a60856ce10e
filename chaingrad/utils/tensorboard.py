"""torch.utils.tensorboard's ``SummaryWriter``: training curves and histograms written as
TensorBoard event files, through the ``tensorboard`` package (as torch's needs it too:
``pip install 'chaingrad[tensorboard]'``); ``tensorboard --logdir runs`` shows them.

Each ``add_*`` call becomes one event (a value, the step, the time) in the file
``events.out.tfevents.<time>.<host>...`` of the writer's folder, the same events torch's
writer makes for the same calls. The file is an append-only log that TensorBoard reads as it
grows, so it is written a record at a time (by tensorboard's own ``EventFileWriter``, which
flushes every ``flush_secs`` seconds and every ``max_queue`` events), not replaced at once.

Example:
    >>> import os, tempfile
    >>> from chaingrad.utils.tensorboard import SummaryWriter
    >>> folder = tempfile.mkdtemp()
    >>> with SummaryWriter(folder) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    >>> [name.startswith("events.out.tfevents.") for name in os.listdir(folder)]
    [True]
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import torch_names
from ..engine import Value
from ..tensor_engine import Tensor

try:
    from tensorboard.compat.proto.event_pb2 import Event, SessionLog
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ModuleNotFoundError as missing:  # an extra, as for torch
    raise ModuleNotFoundError(
        "chaingrad.utils.tensorboard needs the tensorboard package: pip install "
        "'chaingrad[tensorboard]' (or pip install tensorboard)", name=missing.name
    ) from missing

__all__ = ["SummaryWriter", "default_bins", "histogram_proto"]


def default_bins() -> list[float]:
    """The bucket edges TensorBoard's histograms use by default (TensorFlow's): 0, and
    ``±1e-12 * 1.1**k`` up to 1e20, each edge 10% beyond the last."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-x for x in reversed(positive)] + [0] + positive


def histogram_proto(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """A histogram_proto of ``values`` as torch's writer makes it: numpy's counts over ``bins``
    (merged ``max_bins`` at a time if there are more), cut down to the buckets from the one
    before the first that holds a value to the last that holds one, with each bucket's
    right edge (TensorBoard's form).

    Example:
        >>> h = histogram_proto(np.array([0.5, 1.5, 1.6]), bins=[0, 1, 2, 3])
        >>> list(h.bucket_limit), list(h.bucket), h.num
        ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], 3.0)
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("add_histogram: got no values to make a histogram_proto of")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
        edges = np.append(edges[:-1:group], edges[-1])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("add_histogram: no value falls in the bins (values beyond "
                         "±1e20 are outside TensorBoard's default bins)")
    first, last = int(filled[0]), int(filled[-1])
    # one bucket more on the left (an empty one if need be), so that the leftmost edge shows
    kept = counts[first - 1:last + 1] if first > 0 else np.concatenate([[0], counts[:last + 1]])
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=edges[first:last + 2].tolist(), bucket=kept.tolist())


class SummaryWriter:
    """Writes TensorBoard events to a folder, as torch's ``SummaryWriter``.

    Args:
        log_dir: The folder (made if missing); default ``runs/<month><day>_<hh-mm-ss>_
            <host><comment>``, as torch's.
        comment: Added to the default folder's name.
        purge_step: Mark the events from this step on, in the folder's earlier files, as
            replaced (after a crash, TensorBoard then shows the run's steps once).
        max_queue: Events kept before they are written.
        flush_secs: Seconds between two writes of the kept events.
        filename_suffix: Added to the event file's name.

    Example:
        >>> import tempfile
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.add_scalars("loss", {"train": 0.5, "val": 0.7}, global_step=1)
        >>> writer.add_histogram("weights", np.array([0.1, -0.2, 0.3]), 1)
        >>> writer.add_text("note", "the first run", 1)
        >>> writer.close()
    """

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if not log_dir:
            started = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{started}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.default_bins = default_bins()
        self._writers: dict[str, EventFileWriter] | None = None
        self._main_writer()

    def get_logdir(self) -> str:
        """The folder the events go to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Log one number (a float, a one-element Tensor or array, a Value) under ``tag``
        at ``global_step``; ``new_style`` writes it as a tensor of the scalars plugin
        (float32, or float64 with ``double_precision``), as torch's."""
        number = _one_number("add_scalar", scalar_value)
        if new_style:
            proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
                     else TensorProto(float_val=[number], dtype="DT_FLOAT"))
            value = Summary.Value(tag=tag, tensor=proto, metadata=SummaryMetadata(
                plugin_data=SummaryMetadata.PluginData(plugin_name="scalars")))
        else:
            value = Summary.Value(tag=tag, simple_value=number)
        self._write(self._main_writer(), Summary(value=[value]), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Log several numbers on one chart: each ``tag`` goes to a folder of its own,
        ``<log_dir>/<main_tag>_<tag>``, under the tag ``main_tag`` (torch's layout)."""
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(f"add_scalars: tag_scalar_dict must be a dict of tag -> number, "
                            f"got {type(tag_scalar_dict).__name__}")
        walltime = time.time() if walltime is None else walltime
        folder = self._main_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            path = f"{folder}/{main_tag.replace('/', '_')}_{tag}"
            writers = self._writers
            if path not in writers:  # type: ignore[operator]
                writers[path] = self._new_writer(path)  # type: ignore[index]
            summary = Summary(value=[Summary.Value(
                tag=main_tag, simple_value=_one_number("add_scalars", scalar_value))])
            self._write(writers[path], summary, global_step, walltime)  # type: ignore[index]

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """Log the distribution of ``values`` (a Tensor, an array, a list): TensorFlow's
        default buckets (``bins="tensorflow"``), or anything numpy's ``histogram_proto`` takes
        as ``bins`` (a count, a method's name such as ``"auto"``, the edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        proto = histogram_proto(_array("add_histogram", values), bins, max_bins)
        self._write(self._main_writer(), Summary(value=[Summary.Value(tag=tag, histo=proto)]),
                    global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int, sum: float,  # noqa: A002
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any,
                          global_step: int | None = None, walltime: float | None = None,
                          ) -> None:
        """Log a histogram_proto already counted: each bucket's right edge and count."""
        limits, counts = list(bucket_limits), list(bucket_counts)
        if len(limits) != len(counts):
            raise ValueError(f"add_histogram_raw: expected as many bucket_limits as "
                             f"bucket_counts, got {len(limits)} and {len(counts)}")
        proto = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                               bucket_limit=limits, bucket=counts)
        self._write(self._main_writer(), Summary(value=[Summary.Value(tag=tag, histo=proto)]),
                    global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Log a text (Markdown) under ``<tag>/text_summary``, for TensorBoard's text tab."""
        if not isinstance(text_string, str):
            raise TypeError(f"add_text: text_string must be a str, got "
                            f"{type(text_string).__name__}")
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
        proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = Summary.Value(tag=f"{tag}/text_summary", metadata=metadata, tensor=proto)
        self._write(self._main_writer(), Summary(value=[value]), global_step, walltime)

    def flush(self) -> None:
        """Write every event kept so far to disk."""
        for writer in (self._writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Write what is kept and close the files (an ``add_*`` after it opens a new one)."""
        if self._writers is None:
            return
        for writer in self._writers.values():
            writer.flush()
            writer.close()
        self._writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name in torch_names.SUMMARY_WRITER:
            raise AttributeError(f"chaingrad's SummaryWriter has no {name!r} yet")
        raise AttributeError(f"'SummaryWriter' object has no attribute {name!r}")

    # ---- the event files ----

    def _main_writer(self) -> EventFileWriter:
        """The writer of ``log_dir`` (a new file if the writer was closed)."""
        if self._writers is None:
            writer = self._new_writer(self.log_dir)
            self._writers = {self.log_dir: writer}
            if self.purge_step is not None:  # TensorBoard drops the later steps it has
                writer.add_event(Event(step=self.purge_step, wall_time=time.time(),
                                       file_version="brain.Event:2"))
                writer.add_event(Event(step=self.purge_step, wall_time=time.time(),
                                       session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
            return writer
        return self._writers[self.log_dir]

    def _new_writer(self, folder: str) -> EventFileWriter:
        return EventFileWriter(folder, self.max_queue, self.flush_secs, self.filename_suffix)

    @staticmethod
    def _write(writer: EventFileWriter, summary: Summary, step: Any, walltime: Any) -> None:
        event = Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
        if step is not None:
            event.step = int(step)
        writer.add_event(event)


def _array(where: str, values: Any) -> np.ndarray:
    """Numbers from a Tensor, a Value, an array, a list or a number, as a float64 array."""
    if isinstance(values, Tensor):
        values = values.detach().numpy()
    elif isinstance(values, Value):
        values = values.data
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: expected numbers (a Tensor, an array, a number), got "
                        f"{type(values).__name__}") from None
    return array


def _one_number(where: str, value: Any) -> float:
    array = _array(where, value).squeeze()
    if array.ndim != 0:
        raise ValueError(f"{where}: expected one number, got {array.size} (shape "
                         f"{tuple(array.shape)})")
    return float(array)


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.utils.tensorboard", name, torch_names.TENSORBOARD)
