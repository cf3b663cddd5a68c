"""obs, the run observatory: a folder of training-run artifacts in, a static website out."""

__version__ = "0.1.0"
