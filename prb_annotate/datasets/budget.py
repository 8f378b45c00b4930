"""One budget for what an uploaded file decodes to, whatever its format or wrapping.

A few kilobytes can decode to gigabytes: a Parquet dictionary page, a zip member, one JSON
Lines record that fills a whole archive. Every reader of an upload (a dataset file bare or
zipped, in any format; an answer file in any of its readers) therefore reads against one
``DecodeBudget``, made by ``upload_budget()`` from two settings:

- ``PRB_UPLOAD_MAX_EXPANDED_BYTES`` bounds everything the upload decodes to: the bytes of
  every text file read, every Parquet batch as it would be once expanded, and what an archive
  unpacks to;
- ``PRB_UPLOAD_MAX_BYTES`` (the upload limit itself) bounds what is held at once: one line of
  JSON Lines or CSV, and a file that can only be read whole (a JSON list, Label Studio's
  export).

So the memory a worker needs for an upload is bounded by the budget, not by the file:
reading stops before a line or a file past the bound is held. ``BoundedReader`` is the
counting wrapper the text readers read through; a local file imported by ``import_pairs`` or
``import_annotations`` is the operator's own and is read without a budget.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from django.conf import settings

from prb_annotate.formats.numbers import byte_size

LIMIT_SETTING = "PRB_UPLOAD_MAX_EXPANDED_BYTES"
HELD_SETTING = "PRB_UPLOAD_MAX_BYTES"


class OverBudget(Exception):
    """What is read would pass the budget; nothing more is read."""

    def __init__(self, what: str, spent: int, limit: int, setting: str) -> None:
        if setting == HELD_SETTING:
            message = (
                f"{what} is longer than {byte_size(limit)}; an upload is read a line at a "
                f"time, and a line (or a file read whole) may hold at most {byte_size(limit)} "
                f"({setting})"
            )
        else:
            message = (
                f"{what} decodes to more than {byte_size(limit)} (at least "
                f"{byte_size(spent)}); an upload may decode to at most {byte_size(limit)} "
                f"({setting})"
            )
        super().__init__(message)


@dataclass
class DecodeBudget:
    """Bytes an upload may decode to (``limit``) and may hold at once (``held``)."""

    limit: int
    held: int
    spent: int = 0

    def spend(self, size: int, what: str = "the upload") -> None:
        """Count ``size`` decoded bytes; OverBudget past the limit."""
        self.spent += size
        if self.spent > self.limit:
            raise OverBudget(what, self.spent, self.limit, LIMIT_SETTING)

    def hold(self, size: int, what: str) -> None:
        """Check that ``size`` bytes may be held at once; OverBudget past ``held``."""
        if size > self.held:
            raise OverBudget(what, size, self.held, HELD_SETTING)

    def read_whole(self, stream: IO[bytes], what: str = "the file") -> bytes:
        """The rest of ``stream``, read only when it fits what may be held at once."""
        data = stream.read(self.held + 1)
        self.hold(len(data), what)
        self.spend(len(data), what)
        return data


def upload_budget() -> DecodeBudget:
    """The budget of one uploaded file, from the settings."""
    return DecodeBudget(
        limit=settings.PRB_UPLOAD_MAX_EXPANDED_BYTES, held=settings.PRB_UPLOAD_MAX_BYTES
    )


class BoundedReader:
    """A binary stream read line by line (or whole) against a budget: a line longer than the
    budget's ``held`` is refused before it is held, and every byte read is spent."""

    def __init__(self, stream: IO[bytes], budget: DecodeBudget) -> None:
        self.stream = stream
        self.budget = budget

    def __iter__(self) -> Iterator[bytes]:
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def readline(self) -> bytes:
        line = self.stream.readline(self.budget.held + 1)
        if len(line) > self.budget.held:
            self.budget.hold(len(line), "a line")
        self.budget.spend(len(line))
        return line

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            return self.budget.read_whole(self.stream)
        data = self.stream.read(size)
        self.budget.spend(len(data))
        return data


def bounded(stream: IO[bytes], budget: DecodeBudget | None) -> IO[bytes]:
    """``stream`` read through the budget, or as it is without one."""
    if budget is None:
        return stream
    return BoundedReader(stream, budget)  # type: ignore[return-value]
