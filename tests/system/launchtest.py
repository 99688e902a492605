"""The launch secret a task's launcher proves itself with (src/exec/launch_secret.h), computed
as the server computes it, for tests that call the launch routes as a launcher would."""

import hashlib
import hmac


def launch_secret(token, job, role, index, attempt):
    """Task ROLE:INDEX of the job's attempt: HMAC-SHA256 keyed by the server's token."""
    text = "weir-launch-task\n%d\n%s\n%d\n%d" % (int(job), role, int(index), int(attempt))
    return hmac.new(token.encode(), text.encode(), hashlib.sha256).hexdigest()


def attempt_secret(token, job, attempt):
    """Every task of the job's attempt (what a Slurm batch script's launchers get)."""
    text = "weir-launch-attempt\n%d\n%d" % (int(job), int(attempt))
    return hmac.new(token.encode(), text.encode(), hashlib.sha256).hexdigest()
