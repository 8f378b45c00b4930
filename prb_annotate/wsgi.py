"""WSGI entry point: ``gunicorn prb_annotate.wsgi`` (``--preload`` recommended)."""

import os
import sys
from importlib import import_module

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
try:
    application = get_wsgi_application()
except ImproperlyConfigured as error:
    # One line to act on (SECRET_KEY missing, say), not a traceback; gunicorn stops on exit
    # code 3 (a worker that cannot boot) instead of starting workers again and again.
    print(f"ImproperlyConfigured: {error}", file=sys.stderr)
    sys.exit(3)
# The URL map, and the views with pandas and scipy behind them, loaded now rather than by a
# worker's first request: a worker takes no request before it is ready, and under
# ``gunicorn --preload`` a worker replacing a killed one is a fork of a master that has loaded
# everything, ready in milliseconds instead of seconds. Nothing here opens a database connection
# (a forked copy of one would be shared by every worker).
import_module(settings.ROOT_URLCONF)
