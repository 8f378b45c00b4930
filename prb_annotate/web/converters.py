"""URL converters, registered once in urls.py before any area's patterns are built."""


class RowId:
    """A row id: at most 18 digits, so it always fits the database's 64-bit integers (a longer
    number is no URL here, hence a 404, rather than an overflow inside the database driver)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
