"""Long work run in the background by a task worker (Django's Tasks API): the export zip and the
paper zip of a campaign, each a ``Job`` row that the pages and the API show and cancel."""
