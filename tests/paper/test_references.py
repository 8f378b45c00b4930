"""The bibliography: entries read from ``references.bib`` and named in Markdown as natbib's
``\\citep`` with plainnat names them in the PDF."""

import pytest

from prb_annotate.paper import references
from prb_annotate.paper.references import author_year, cited_names, entries, plain

THREE = """@misc{three2024,
  author = {Angelopoulos, Anastasios N. and Duchi, John C. and
            Zrnic, Tijana},
  title = {PPI++: Efficient Prediction-Powered Inference},
  year = {2024}
}"""


def test_it_names_one_two_and_three_authors_as_plainnat_does() -> None:
    assert cited_names("@misc{a,\n  author = {Student},\n  year = {1908}\n}") == "Student"
    assert cited_names(references.ENTRIES["zrnic2024"]) == "Zrnic and Candès"
    assert cited_names(THREE) == "Angelopoulos et al."


def test_it_turns_bibtex_accents_into_unicode() -> None:
    assert plain(r"Cand{\`e}s") == "Candès"
    assert plain(r"G{\"o}del") == "Gödel"
    assert plain(r"{\'E}mile") == "Émile"


def test_it_reads_each_entry_by_its_key() -> None:
    read = entries(f"{THREE}\n\n{references.ENTRIES['holm1979']}\n")
    assert list(read) == ["three2024", "holm1979"]
    assert read["three2024"] == THREE
    with pytest.raises(ValueError, match="an entry without a key"):
        entries("@article{\n}")


def test_the_markdown_citation_comes_from_the_entry() -> None:
    assert author_year(["gwet2008", "gwet2014"]) == "(Gwet, 2008; Gwet, 2014)"
    assert author_year(["angelopoulos2024"]) == "(Angelopoulos et al., 2024)"
    for key, entry in references.ENTRIES.items():
        name, year = references.AUTHOR_YEAR[key]
        assert f"year = {{{year}}}" in entry
        assert name.split()[0] in plain(entry)
