"""Stopping a long model pass between two batches.

A caller that may have to give up a pass (the app's scoring job, which a manager can cancel)
runs it inside ``between_batches(check)``; every model pass calls ``batch_done`` once a batch
(after it; before it where generating the batch is the slow part), which runs the checks of the
callers around it, innermost last. A check stops the pass
by raising; nothing here catches it, so what the pass computed is dropped with it. Outside
such a block ``batch_done`` does nothing. The checks are kept in a context variable: a pass in
one thread never runs another thread's checks.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Check = Callable[[], None]

_checks: ContextVar[tuple[Check, ...]] = ContextVar("evaluation_batch_checks", default=())


@contextmanager
def between_batches(check: Check) -> Iterator[None]:
    """Run ``check`` at every batch of the model passes inside the block."""
    token = _checks.set((*_checks.get(), check))
    try:
        yield
    finally:
        _checks.reset(token)


def batch_done() -> None:
    """Called by a model pass at each batch: the callers' checks, which may raise."""
    for check in _checks.get():
        check()
