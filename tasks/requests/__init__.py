"""What is asked of a model and what it costs: spec, request and key, tokens, price."""
