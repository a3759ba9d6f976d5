"""dicelab: Monte Carlo simulation and exact strategy research for Penta and Farkle."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dicelab")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
