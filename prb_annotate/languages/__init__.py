"""Which language a page speaks, and the account's own choice of it.

The order, first match wins: the API speaks English always (its messages and codes are a
contract, not prose); a person's explicit choice (the account's, else the browser's cookie from
the header's chooser); on a campaign's participant pages, the campaign's language; the
browser's ``Accept-Language``; English. ``middleware.py`` applies it, ``models.py`` keeps the
account's choice, and ``texts.py`` picks a campaign's text written for the active language.
"""
