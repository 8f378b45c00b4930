"""The human-evaluation section of a paper, written from the audit: booktabs tables, a methods
paragraph with its references, and the audit's charts as vector figures.

``inputs.py`` gathers what a campaign's paper shows (the audit, the leaderboard of its reward
models, its annotator pools) into one JSON-ready ``numbers`` dict; everything else here is pure
rendering of that dict: ``numbers.py`` is the one rounding rule and the interval accessors,
``tables.py`` the tables as plain data, ``latex.py`` and ``markdown.py`` write them,
``methods.py`` words the methods paragraph, ``references.py`` holds the BibTeX entries,
``figures.py`` draws the charts with matplotlib and ``bundle.py`` puts the files together (a
folder or a zip).
"""
