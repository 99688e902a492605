# The package is described in setup.cfg; this file lets `pip install ./python` build with
# the setuptools already installed (Debian's), without fetching build tools from a network.
from setuptools import setup

setup()
