"""Not a workflow file: it never names the scheduler, so the server never imports it."""
raise RuntimeError("never imported by the server")
