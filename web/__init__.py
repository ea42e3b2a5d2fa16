"""Helpers every app's views share: page-or-partial rendering, downloads, spreadsheets."""
