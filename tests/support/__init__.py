"""Helpers shared by several test modules and by the scripts that drive the service (bench/)."""
