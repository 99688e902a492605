"""The Ray-compatible module: programs written for Ray Core's remote functions, run on weir.

`weir run PROGRAM.py` (or `python3 -m weir.run PROGRAM.py`) puts site/ first on the
program's path, so that its `import ray` is site/ray/, which is this package's API under
Ray's name: ray.init, @ray.remote(num_cpus=..., num_gpus=...) functions, .options(),
ray.get, ray.put, ray.wait, ray.cancel, ray.exceptions (api.py, exceptions.py).  Calls run on warm
workers; actors (@ray.remote on a class) are warm workers of their own (actors.py).  docs/ray.md has the table of
Ray's API and what weir does for each.
"""

from . import exceptions, util
from .api import (ActorClass, ActorHandle, ObjectRef, ObjectRefGenerator, RayContext, RemoteFunction,
                  RuntimeContext, __version__, available_resources, cancel, cluster_resources,
                  get, get_actor, get_gpu_ids, get_runtime_context, init, is_initialized, kill,
                  method, nodes, put, remote, shutdown, wait)
from .timeline import timeline

__all__ = ["init", "shutdown", "is_initialized", "remote", "method", "get", "put", "wait",
           "cancel", "kill", "get_actor", "ActorClass", "ActorHandle", "util",
           "get_runtime_context", "get_gpu_ids", "available_resources", "cluster_resources",
           "nodes", "ObjectRef", "ObjectRefGenerator", "RemoteFunction", "RayContext",
           "RuntimeContext", "exceptions", "timeline", "__version__"]
