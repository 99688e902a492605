"""The old name of weir.remote, kept for programs (and pickles) that name it: the same
objects, from weir/remote/."""

from .remote.functions import RemoteFunction, put, remote, train
from .remote.futures import Future, ObjectRef, _get_ref, cancel, get, kill, wait
from .remote.session import _at_exit, _get_session, init

__all__ = ["remote", "get", "wait", "put", "train", "init", "kill", "cancel", "Future",
           "ObjectRef", "RemoteFunction", "_at_exit", "_get_ref", "_get_session"]
