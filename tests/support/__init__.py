"""Helpers shared by test modules of several apps, and by the scripts of bench/: one module per concern.

Test modules import helpers from here and from ``tests/factories.py`` only, never from another test module or a
conftest (``tests/test_support_boundaries.py``). The fixtures defined here (``api``, ``pos``, ``register``,
``allow_loopback``, ``receiver``, ``reachable_receiver``, ``reference``, ``configure``, ``sign_in``, the file and
mail servers) are registered for every test by ``pytest_plugins`` in ``tests/conftest.py``.
"""
