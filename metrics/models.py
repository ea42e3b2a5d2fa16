"""Retrieval runs and their results (see issue: runs and dashboards)."""
