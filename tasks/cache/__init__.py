"""Answers kept in the store: the response cache (the journal), claims, store calls."""
