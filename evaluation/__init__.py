"""Score reward models on preference pairs: plain Python, torch and transformers, no Django.

Library entry points:

- :func:`evaluation.scoring.score_records` ``(records, config, *, model=None) -> ScoreResult``:
  scores pairs (dicts in the official or plain shape) with a classifier reward model or a
  generative judge; ``ScoreResult.pairs`` holds one :class:`~evaluation.results.PairScore` per
  record, in input order, and ``ScoreResult.summary`` the accuracy overall, per category and
  per group. :class:`~evaluation.config.ScoreConfig` holds the settings.
- :func:`evaluation.metrics.accuracy_summary` and :func:`~evaluation.metrics.accuracy_stats`
  summarise the outcomes of any subset (validated, excluded, ...), each accuracy with Wilson's
  score interval with continuity correction; :func:`~evaluation.metrics.accuracy_difference`
  gives one subset's accuracy minus another's with the interval and test ``compare`` gives
  validated against excluded pairs (Newcombe's hybrid score interval, Fisher's exact test).
- :func:`evaluation.correlation.correlations` (Pearson, Spearman, Kendall) and
  :func:`~evaluation.correlation.ranking_agreement` (NDCG, rank-biased overlap, weighted Kendall's
  tau; no p-value) relate benchmark accuracy to downstream results; each figure's ``reason``
  says why an interval or a p-value is missing or marked unreliable.
- :func:`evaluation.records.load_records` reads an exported split (file or folder).

Command line: ``python -m evaluation score ...`` and ``python -m evaluation correlate ...``
(see :mod:`evaluation.cli` and docs/evaluation.md); several GPUs with
``torchrun --nproc_per_node N -m evaluation``.
"""
