"""The call path: gateway, limits, admission, authority, budget, retries, stops, client builder."""
