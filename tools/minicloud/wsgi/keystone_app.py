"""gunicorn entry point for keystone.

keystone's WSGI set-up hands ``sys.argv`` to oslo.config, which rejects
gunicorn's own options: hide them first.
"""
import sys

sys.argv = sys.argv[:1]
from keystone.wsgi.api import application  # noqa: E402,F401
