"""roadeval: evaluate multimodal models on transportation benchmarks."""

from roadeval.environment import apply_offline_defaults

apply_offline_defaults()

__version__ = "0.1.0"
