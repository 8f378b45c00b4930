"""prb-annotate: annotation campaigns and validity audits for personalized preference data."""

__version__ = "0.1.0"
