"""How far an uploaded Parquet file may expand when it is read.

Parquet compresses (a few hundred bytes of zstd can hold megabytes of one repeated text) and
encodes (a dictionary page holds a value once, and any number of rows may point to it), so the
size of an upload says little about the memory reading it takes: a 1 KB file can decode to
gigabytes. An upload is therefore read against a budget of decoded bytes, in two steps:

1. Before anything is decompressed, the file's footer must declare at most the budget: the
   uncompressed size of every column chunk, plus 8 bytes for every value it holds (nulls
   included), which bounds what the pages decompress to and how many values there are.
2. Texts are then read as dictionaries (each distinct value once) and every batch of rows is
   measured as it would be once expanded, before it is: when the file's running total passes
   the budget, reading stops.

The budget is the upload's one ``DecodeBudget`` (``budget.py``), shared with every other file
of the upload; the error names its limit (``PRB_UPLOAD_MAX_EXPANDED_BYTES``).
"""

from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from prb_annotate.datasets.budget import LIMIT_SETTING, DecodeBudget, OverBudget
from prb_annotate.formats.numbers import byte_size

# Per value: an offset or a slot, beyond the bytes of the text itself.
VALUE_OVERHEAD_BYTES = 8


class ExpandsTooFar(OverBudget):
    """The file would decode to more than the budget; nothing more is read."""

    def __init__(self, expanded: int, limit: int) -> None:
        Exception.__init__(
            self,
            f"the Parquet file expands to more than {byte_size(limit)} when read (at least "
            f"{byte_size(expanded)}); an upload may expand to at most {byte_size(limit)} "
            f"({LIMIT_SETTING})",
        )


def spend(budget: DecodeBudget, batch: pa.RecordBatch) -> None:
    """Count the batch as it will be once expanded; ExpandsTooFar past the limit."""
    budget.spent += sum(decoded_bytes(column) for column in batch.columns)
    if budget.spent > budget.limit:
        raise ExpandsTooFar(budget.spent, budget.limit)


def declared_bytes(metadata: pq.FileMetaData) -> int:
    """What the footer says the pages decompress to, and a slot for every value."""
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            column = row_group.column(index)
            total += column.total_uncompressed_size + VALUE_OVERHEAD_BYTES * column.num_values
    return total


def bounded_file(stream: IO[bytes], budget: DecodeBudget) -> pq.ParquetFile:
    """The file opened to read its texts as dictionaries, once its footer declares no more
    than what is left of the budget (which its batches then spend)."""
    footer = pq.ParquetFile(stream)
    declared = declared_bytes(footer.metadata)
    if budget.spent + declared > budget.limit:
        raise ExpandsTooFar(budget.spent + declared, budget.limit)
    texts = [column.path for column in footer.schema if column.physical_type == "BYTE_ARRAY"]
    stream.seek(0)
    return pq.ParquetFile(stream, read_dictionary=texts)


def decoded_bytes(array: pa.Array) -> int:
    """About how many bytes ``array`` takes once every dictionary is expanded."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        return dictionary_bytes(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
        return decoded_bytes(array.flatten()) + VALUE_OVERHEAD_BYTES * len(array)
    if pa.types.is_fixed_size_list(kind):
        return decoded_bytes(array.flatten())
    if pa.types.is_struct(kind):
        return sum(decoded_bytes(child) for child in array.flatten())
    return int(array.nbytes)


def dictionary_bytes(array: pa.DictionaryArray) -> int:
    values = array.dictionary
    slots = VALUE_OVERHEAD_BYTES * len(array)
    if any(
        check(values.type)
        for check in (
            pa.types.is_string,
            pa.types.is_binary,
            pa.types.is_large_string,
            pa.types.is_large_binary,
        )
    ):
        taken = pc.binary_length(values).take(array.indices)
        return int(pc.sum(taken).as_py() or 0) + slots
    # Any other value type has a fixed width: each row takes one value's bytes.
    return slots + len(array) * (int(values.nbytes) // max(1, len(values)) + 1)
