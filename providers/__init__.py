"""Readers of Cursor's files, pricing and call records."""
