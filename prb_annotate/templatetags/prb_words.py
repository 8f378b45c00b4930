"""Words for stored codes, in the request's language (``web/status_words.py``)."""

from django import template

from prb_annotate.web.status_words import status_word

register = template.Library()
register.filter("status_word", status_word)
