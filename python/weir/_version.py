"""The version of weir: the one source, read by the package, by pyproject.toml and by
the Makefile (the `weir` program's --version and the API's `version`)."""

__version__ = "0.1.0"
