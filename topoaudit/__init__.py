"""topoaudit: audit the GPU interconnect of a machine before trusting it with a deployment."""

__version__ = "0.1.0"
