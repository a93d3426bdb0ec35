"""Helpers shared by test modules of several apps, and by the scripts of bench/."""
