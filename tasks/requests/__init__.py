"""What is asked of a model and what it costs: the model's spec, the request and its key, the call record, its tokens by the provider's rule, its price."""
