"""Recall: from a user message to the few memories worth injecting."""
