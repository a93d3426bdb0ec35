"""Helpers shared by test modules of several apps."""
