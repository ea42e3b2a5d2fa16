"""URLs of the labelling screens (assignments, queue, judging, document evidence, search)."""

urlpatterns: list = []
