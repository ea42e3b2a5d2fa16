"""The demo projects (Cranfield, LeCaRD) built from the public datasets in data/demo."""
