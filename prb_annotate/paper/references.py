"""The works the methods paragraph cites, as BibTeX entries (only those cited are written)."""

from collections.abc import Iterable

ENTRIES = {
    "krippendorff2011": """@techreport{krippendorff2011,
  author = {Krippendorff, Klaus},
  title = {Computing {Krippendorff's} Alpha-Reliability},
  institution = {Annenberg School for Communication, University of Pennsylvania},
  type = {Departmental Papers (ASC)},
  year = {2011}
}""",
    "gwet2008": """@article{gwet2008,
  author = {Gwet, Kilem Li},
  title = {Computing Inter-Rater Reliability and Its Variance in the Presence of High
           Agreement},
  journal = {British Journal of Mathematical and Statistical Psychology},
  volume = {61},
  number = {1},
  pages = {29--48},
  year = {2008}
}""",
    "gwet2014": """@book{gwet2014,
  author = {Gwet, Kilem Li},
  title = {Handbook of Inter-Rater Reliability},
  edition = {Fourth},
  publisher = {Advanced Analytics, LLC},
  year = {2014}
}""",
    "efron1979": """@article{efron1979,
  author = {Efron, Bradley},
  title = {Bootstrap Methods: Another Look at the Jackknife},
  journal = {The Annals of Statistics},
  volume = {7},
  number = {1},
  pages = {1--26},
  year = {1979}
}""",
    "wilson1927": """@article{wilson1927,
  author = {Wilson, Edwin B.},
  title = {Probable Inference, the Law of Succession, and Statistical Inference},
  journal = {Journal of the American Statistical Association},
  volume = {22},
  number = {158},
  pages = {209--212},
  year = {1927}
}""",
    "cochran1977": """@book{cochran1977,
  author = {Cochran, William G.},
  title = {Sampling Techniques},
  edition = {Third},
  publisher = {Wiley},
  year = {1977}
}""",
    "angelopoulos2023": """@article{angelopoulos2023,
  author = {Angelopoulos, Anastasios N. and Bates, Stephen and Fannjiang, Clara and Jordan,
            Michael I. and Zrnic, Tijana},
  title = {Prediction-Powered Inference},
  journal = {Science},
  volume = {382},
  number = {6671},
  pages = {669--674},
  year = {2023}
}""",
    "angelopoulos2024": """@misc{angelopoulos2024,
  author = {Angelopoulos, Anastasios N. and Duchi, John C. and Zrnic, Tijana},
  title = {{PPI++}: Efficient Prediction-Powered Inference},
  howpublished = {arXiv:2311.01453},
  year = {2024}
}""",
    "mcnemar1947": """@article{mcnemar1947,
  author = {McNemar, Quinn},
  title = {Note on the Sampling Error of the Difference Between Correlated Proportions or
           Percentages},
  journal = {Psychometrika},
  volume = {12},
  number = {2},
  pages = {153--157},
  year = {1947}
}""",
    "holm1979": """@article{holm1979,
  author = {Holm, Sture},
  title = {A Simple Sequentially Rejective Multiple Test Procedure},
  journal = {Scandinavian Journal of Statistics},
  volume = {6},
  number = {2},
  pages = {65--70},
  year = {1979}
}""",
}
# How the Markdown paragraph names each work (natbib's \citep gives the same in the PDF).
AUTHOR_YEAR = {
    "krippendorff2011": ("Krippendorff", 2011),
    "gwet2008": ("Gwet", 2008),
    "gwet2014": ("Gwet", 2014),
    "efron1979": ("Efron", 1979),
    "wilson1927": ("Wilson", 1927),
    "cochran1977": ("Cochran", 1977),
    "mcnemar1947": ("McNemar", 1947),
    "holm1979": ("Holm", 1979),
    "angelopoulos2023": ("Angelopoulos et al.", 2023),
    "angelopoulos2024": ("Angelopoulos, Duchi and Zrnic", 2024),
}


def bibtex(keys: Iterable[str]) -> str:
    """The entries of ``keys``, in the order first cited, without repeats."""
    return "\n\n".join(ENTRIES[key] for key in dict.fromkeys(keys)) + "\n"


def author_year(keys: Iterable[str]) -> str:
    """ "(Gwet, 2008; Gwet, 2014)": an in-text citation for Markdown."""
    return "(" + "; ".join(f"{name}, {year}" for name, year in map(AUTHOR_YEAR.get, keys)) + ")"  # type: ignore[misc]
