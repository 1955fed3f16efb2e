"""Pure-data catalogues shipped with the package."""

__all__: list[str] = []
