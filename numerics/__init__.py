"""Assay's numeric core: pure numpy, no Django import.

One module or package per concern (measures, agreement, significance, mapping, spans,
grades, words, bm25, runfiles); usable from the CLI, the dashboards and a notebook alike.
"""
