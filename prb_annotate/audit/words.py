"""Words the audit writes in English and a page translates when it shows them
(``audit/phrases.py``): ``gettext_noop`` returns its message unchanged, and ``makemessages``
finds its calls by their name, as it finds Django's.

Django's own ``gettext_noop`` reads the settings, so a statistics module that imported it could
not run without a configured Django (the benches and notebooks import them bare); this one is
plain Python.
"""


def gettext_noop(message: str) -> str:
    """``message``, marked for the catalogue and translated only where it is shown."""
    return message
