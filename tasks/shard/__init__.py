"""A shard's stages: plan, ask, score (judge, Ray), its rows and counts; answer workers."""
