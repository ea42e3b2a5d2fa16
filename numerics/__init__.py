"""Assay's numeric core: pure numpy, no Django import.

One module per concern (measures, significance, mapping, agreement); usable from the
CLI, the dashboards and a notebook alike.
"""
