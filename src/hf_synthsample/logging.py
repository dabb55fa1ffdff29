"""Logging for hf-synthsample, controlled the way ``datasets`` / ``transformers`` users expect.

Every library logger lives under ``hf_synthsample``. Its level is what :func:`set_verbosity` set,
else the environment variable ``HF_SYNTHSAMPLE_VERBOSITY`` (``debug`` ... ``critical``, read at
import), else it follows the more verbose of ``datasets``' and ``transformers``' loggers, read at
each log call (default ``WARNING``); ``set_verbosity(logging.NOTSET)`` goes back to following.
Records go to stderr and also propagate to the root logger (:func:`disable_propagation` stops that).

Example:
    >>> from hf_synthsample import logging as hfs_logging
    >>> hfs_logging.set_verbosity_info()
    >>> hfs_logging.get_verbosity() == hfs_logging.INFO
    True
    >>> hfs_logging.set_verbosity(hfs_logging.NOTSET)  # follow datasets / transformers again
"""

from __future__ import annotations

import logging
import os
import threading

from logging import CRITICAL, DEBUG, ERROR, INFO, NOTSET, WARNING  # noqa: F401 (re-exported)

__all__ = ["get_logger", "get_verbosity", "set_verbosity", "set_verbosity_debug", "set_verbosity_info",
           "set_verbosity_warning", "set_verbosity_error", "enable_propagation", "disable_propagation", "ENV_VAR",
           "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]

LIBRARY = "hf_synthsample"
ENV_VAR = "HF_SYNTHSAMPLE_VERBOSITY"
FOLLOWED = ("datasets", "transformers")
_LEVELS = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR, "critical": CRITICAL}
_lock = threading.Lock()
_configured = False


class _LibraryRootLogger(logging.Logger):
    """The ``hf_synthsample`` logger: its ``level`` is its own when set, else the followed libraries'.

    Children's ``getEffectiveLevel`` reads this attribute, and any ``setLevel`` clears their caches.
    """

    @property  # type: ignore[override]
    def level(self) -> int:
        own = self.__dict__.get("_own_level", NOTSET)
        if own:
            return own
        followed = [logging.Logger.manager.loggerDict.get(name) for name in FOLLOWED]
        levels = [lg.level for lg in followed if isinstance(lg, logging.Logger) and lg.level]
        return min(levels) if levels else WARNING

    @level.setter
    def level(self, value: int) -> None:
        self.__dict__["_own_level"] = value


def _root() -> logging.Logger:
    global _configured
    if _configured:
        return logging.getLogger(LIBRARY)
    with _lock:
        lg = logging.getLogger(LIBRARY)
        if not _configured:
            own = lg.__dict__.get("level", NOTSET)
            lg.__class__ = _LibraryRootLogger  # the logger object may already exist; keep it
            lg.level = own
            lg.addHandler(logging.StreamHandler())
            env = os.environ.get(ENV_VAR)
            if env:
                if env.lower() in _LEVELS:
                    lg.setLevel(_LEVELS[env.lower()])
                else:
                    lg.warning(f"unknown {ENV_VAR}={env!r}; accepted values: {list(_LEVELS)}; ignored")
            _configured = True
    return lg


_root()  # at import (``import hf_synthsample`` imports this module): every hf_synthsample.* logger follows


def get_logger(name: str | None = None) -> logging.Logger:
    """The logger ``name`` (a module's ``__name__``, under ``hf_synthsample``), library set up."""
    _root()
    return logging.getLogger(name or LIBRARY)


def get_verbosity() -> int:
    """The current level of hf-synthsample's loggers (e.g. ``logging.INFO``)."""
    return _root().getEffectiveLevel()


def set_verbosity(verbosity: int) -> None:
    """Set the level of hf-synthsample's loggers; ``NOTSET`` follows ``datasets`` / ``transformers``."""
    if isinstance(verbosity, bool) or not isinstance(verbosity, int):
        raise TypeError(f"verbosity must be a logging level (an int such as logging.INFO), got {verbosity!r}")
    _root().setLevel(verbosity)


def set_verbosity_debug() -> None:
    """Show everything (``DEBUG``)."""
    set_verbosity(DEBUG)


def set_verbosity_info() -> None:
    """Show progress messages such as "restored N rows" (``INFO``)."""
    set_verbosity(INFO)


def set_verbosity_warning() -> None:
    """Show warnings and errors only (``WARNING``, the default)."""
    set_verbosity(WARNING)


def set_verbosity_error() -> None:
    """Show errors only (``ERROR``)."""
    set_verbosity(ERROR)


def enable_propagation() -> None:
    """Let records reach the root logger's handlers too (the default)."""
    _root().propagate = True


def disable_propagation() -> None:
    """Keep records to hf-synthsample's own handler (no doubles under ``logging.basicConfig``)."""
    _root().propagate = False
