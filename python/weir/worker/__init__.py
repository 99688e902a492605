"""The task side of weir's Python: what runs inside a job's task.

runner.py runs one remote call (or one rank of weir.train) and writes its result into the
object folder; it is started as a script by the caller's interpreter, so that a call does
not import the client's half of the package.  The warm workers of the Ray-compatible module
(processes that stay up between calls, and actors) will live here too.
"""
