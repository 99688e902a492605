"""The Ray-compatible module (to come): programs written for Ray, run on weir.

It will hold what `import ray` offers such a program: `ray.init`, `@ray.remote(num_cpus=...,
num_gpus=...)` functions and actors (classes whose instances live in a worker of their
own), `ray.get`, `ray.put`, `ray.wait`, built on weir.remote and on the warm workers of
weir/worker/.  Nothing is defined here yet.
"""
