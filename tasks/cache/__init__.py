"""Answers kept in the store: the response cache (a journal and a cache at once), claims on requests being asked, and store calls from the gateway loop."""
