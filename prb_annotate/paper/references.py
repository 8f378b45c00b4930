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
    "rubin1981": """@article{rubin1981,
  author = {Rubin, Donald B.},
  title = {The {Bayesian} Bootstrap},
  journal = {The Annals of Statistics},
  volume = {9},
  number = {1},
  pages = {130--134},
  year = {1981}
}""",
    "efron1987": """@article{efron1987,
  author = {Efron, Bradley},
  title = {Better Bootstrap Confidence Intervals},
  journal = {Journal of the American Statistical Association},
  volume = {82},
  number = {397},
  pages = {171--185},
  year = {1987}
}""",
    "newcombe1998": """@article{newcombe1998,
  author = {Newcombe, Robert G.},
  title = {Two-Sided Confidence Intervals for the Single Proportion: Comparison of Seven
           Methods},
  journal = {Statistics in Medicine},
  volume = {17},
  number = {8},
  pages = {857--872},
  year = {1998}
}""",
    "fisher1921": """@article{fisher1921,
  author = {Fisher, Ronald A.},
  title = {On the ``Probable Error'' of a Coefficient of Correlation Deduced from a Small
           Sample},
  journal = {Metron},
  volume = {1},
  pages = {3--32},
  year = {1921}
}""",
    "student1908": """@article{student1908,
  author = {Student},
  title = {The Probable Error of a Mean},
  journal = {Biometrika},
  volume = {6},
  number = {1},
  pages = {1--25},
  year = {1908}
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
    "ji2025": """@misc{ji2025,
  author = {Ji, Wenlong and Lei, Lihua and Zrnic, Tijana},
  title = {Predictions as Surrogates: Revisiting Surrogate Outcomes in the Age of {AI}},
  howpublished = {arXiv preprint},
  year = {2025}
}""",
    "platt1999": """@incollection{platt1999,
  author = {Platt, John C.},
  title = {Probabilistic Outputs for Support Vector Machines and Comparisons to Regularized
           Likelihood Methods},
  booktitle = {Advances in Large Margin Classifiers},
  publisher = {MIT Press},
  pages = {61--74},
  year = {1999}
}""",
    "zrnic2024": r"""@inproceedings{zrnic2024,
  author = {Zrnic, Tijana and Cand{\`e}s, Emmanuel J.},
  title = {Active Statistical Inference},
  booktitle = {Proceedings of the 41st International Conference on Machine Learning},
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
    "tango1998": """@article{tango1998,
  author = {Tango, Toshiro},
  title = {Equivalence Test and Confidence Interval for the Difference in Proportions for
           the Paired-Sample Design},
  journal = {Statistics in Medicine},
  volume = {17},
  number = {8},
  pages = {891--908},
  year = {1998}
}""",
}
# How the Markdown paragraph names each work (natbib's \citep gives the same in the PDF).
AUTHOR_YEAR = {
    "krippendorff2011": ("Krippendorff", 2011),
    "gwet2008": ("Gwet", 2008),
    "gwet2014": ("Gwet", 2014),
    "efron1979": ("Efron", 1979),
    "tango1998": ("Tango", 1998),
    "rubin1981": ("Rubin", 1981),
    "efron1987": ("Efron", 1987),
    "newcombe1998": ("Newcombe", 1998),
    "fisher1921": ("Fisher", 1921),
    "student1908": ("Student", 1908),
    "wilson1927": ("Wilson", 1927),
    "cochran1977": ("Cochran", 1977),
    "mcnemar1947": ("McNemar", 1947),
    "holm1979": ("Holm", 1979),
    "angelopoulos2023": ("Angelopoulos et al.", 2023),
    "angelopoulos2024": ("Angelopoulos, Duchi and Zrnic", 2024),
    "ji2025": ("Ji, Lei and Zrnic", 2025),
    "platt1999": ("Platt", 1999),
    "zrnic2024": ("Zrnic and Candès", 2024),
}


def bibtex(keys: Iterable[str]) -> str:
    """The entries of ``keys``, in the order first cited, without repeats."""
    return "\n\n".join(ENTRIES[key] for key in dict.fromkeys(keys)) + "\n"


def author_year(keys: Iterable[str]) -> str:
    """ "(Gwet, 2008; Gwet, 2014)": an in-text citation for Markdown."""
    return "(" + "; ".join(f"{name}, {year}" for name, year in map(AUTHOR_YEAR.get, keys)) + ")"  # type: ignore[misc]
