"""evotui: a terminal workbench for live, LLM-driven evolution of GPU kernels."""

__version__ = "0.1.0"
