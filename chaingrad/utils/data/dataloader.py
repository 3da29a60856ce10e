"""``torch.utils.data.dataloader``, the module where torch defines ``DataLoader``, for
programs that import it from there (``from torch.utils.data.dataloader import
DataLoader`` becomes ``from chaingrad.utils.data.dataloader import DataLoader``).
chaingrad defines it in ``chaingrad.utils.data``.

Example:
    >>> from chaingrad.utils.data import dataloader
    >>> dataloader.DataLoader is DataLoader
    True
"""

from . import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
