"""Pure-data catalogues shipped with the package."""
