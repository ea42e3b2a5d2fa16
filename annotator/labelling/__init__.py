"""The labelling screens: queue and assignments, judging, document view, search."""
