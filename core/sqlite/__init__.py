"""Django's SQLite backend, its write transactions started by a short poll instead of SQLite's busy handler
(``base.DatabaseWrapper``). config/settings.py names it as the engine of every SQLite database."""
