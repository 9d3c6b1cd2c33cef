"""gunicorn entry point for nova-api (see keystone_app for why argv)."""
import sys

sys.argv = sys.argv[:1]
from nova.wsgi.osapi_compute import application  # noqa: E402,F401
