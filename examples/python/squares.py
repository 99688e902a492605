"""Seed 002's first program, on weir: four remote calls, each asking 2 CPUs.

    PYTHONPATH=python python3 examples/python/squares.py      # prints [0, 1, 4, 9]

Each call is a weir job named `f`: `weir jobs list` and the web UI show them.
"""

import weir


@weir.remote(cpus=2)
def f(x):
    return x * x


if __name__ == "__main__":
    futures = [f.remote(i) for i in range(4)]
    print(weir.get(futures))
