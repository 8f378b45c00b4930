"""``python -m evaluation`` (also under ``torchrun ... -m evaluation``)."""

import os
import sys

from evaluation.cli import main

code = main()
if int(os.environ.get("WORLD_SIZE", "1")) > 1:
    # Under torchrun the process group is destroyed and every file closed by now; leaving
    # without the interpreter's finalization keeps gloo's threads from aborting a process that
    # has finished its work ("terminate called without an active exception", exit -6), which
    # torchrun would report as a failed run.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
raise SystemExit(code)
