#!/usr/bin/env python
"""Django's command-line utility for prb-annotate."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A set-up mistake (SECRET_KEY missing, say) is one line to act on, not a traceback.
        sys.exit(f"ImproperlyConfigured: {error}")


if __name__ == "__main__":
    main()
