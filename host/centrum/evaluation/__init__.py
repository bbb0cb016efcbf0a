"""Evaluation of algorithms and peer extractors on data sets (``centrum eval``).

Modules: :mod:`datasets` (loader), :mod:`tokenize` (script-fair tokens), :mod:`metrics` (token shingle P/R/F1 as
scrapinghub's article-extraction-benchmark, LCS P/R/F1/F0.5, trafilatura's snippet counts), :mod:`cache` (rendered
snapshot cache), :mod:`peers` (adapters for other extractors), :mod:`runner` (the page pipeline and workers),
:mod:`report` (report.md, results.json, results.csv, plots).
"""
