"""WSGI entry point: ``gunicorn prb_annotate.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
application = get_wsgi_application()
