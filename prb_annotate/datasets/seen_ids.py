"""The record ids an import has met, in a fixed amount of memory whatever the file's size.

``SeenIds`` is a Bloom filter: asked about an id it has been given, it always says "maybe
seen"; asked about a new one, it says "new" except for a small share of false alarms (about
one in fifteen million records at 500,000 ids, one in 340 at 5,000,000). It never holds the
ids themselves, so it costs ``BITS`` / 8 bytes (8 MiB) from the first record to the last. A
"maybe" is only a suspicion: the importer confirms it exactly by reading the files again
(``importing.Importer.recheck``), which also finds where the id was first seen.

Positions come from Python's ``hash`` of the id, salted per process; the filter lives for one
import in one process, so the salt never changes under it.
"""

BITS = 1 << 26
# With BITS bits, five positions per id keep false alarms rare up to a few million ids.
HASHES = 5
HALF_MASK = (1 << 32) - 1


class SeenIds:
    """A Bloom filter of ids, ``bits`` / 8 bytes however many ids it is given."""

    def __init__(self, bits: int = BITS) -> None:
        self.size = bits
        self.bits = bytearray((bits + 7) // 8)

    def add(self, record_id: str) -> bool:
        """Remember ``record_id``; True when it may have been added before (it surely was
        not when False)."""
        digest = hash(record_id)
        first = digest & HALF_MASK
        # Odd, so that the HASHES positions differ.
        step = ((digest >> 32) & HALF_MASK) | 1
        maybe_seen = True
        for index in range(HASHES):
            bit = (first + index * step) % self.size
            byte, mask = bit >> 3, 1 << (bit & 7)
            if not self.bits[byte] & mask:
                maybe_seen = False
                self.bits[byte] |= mask
        return maybe_seen
