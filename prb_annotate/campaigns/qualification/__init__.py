"""Practice, qualification and screen-out: what a member answers before the queue.

A campaign may have *practice items* (pairs with expected answers and an explanation per
question, answered with immediate feedback and as many retries as wanted) and *qualification
items* (pairs with expected answers and a pass rule, two attempts with feedback after the
first). A member who fails both attempts is screened out: a study participant is sent to the
campaign's screen-out URL (an app page when none is set), an account of the site sees a page
saying so, and a manager may let them in (who, why and when recorded).

The invariant: **practice and qualification never reach the campaign's statistics, and a
member who is not cleared never gets a regular item.**

- The pairs are ``QualificationItem`` rows and their answers ``QualificationAnswer`` rows,
  never ``CampaignItem``, ``Assignment`` or ``Annotation`` rows (as ``ModelAnswer`` is kept
  apart). Agreement, verdicts, quality control, exports, progress figures and quotas read
  only those other tables, so they cannot count these by accident; a pair chosen for practice
  or qualification is set apart from the regular sample, like a gold pair.
- A member is *cleared* once every practice item has an answer of theirs and, when the
  campaign has qualification items, their record says passed or let in (``gate.py``). The
  queue (``assignment.next_assignment``) reads that rule in the transaction that hands out an
  item and hands nothing, not even the member's own earlier reservation, to a member who is
  not cleared; the submit (``annotating.submit``) refuses their regular answers too, so a
  reservation made before (a page still open, an API client) cannot be answered. Failing
  expires the member's live reservations, so their slots go to others at once.
- Outcomes change under the member's row lock, the lock the queue takes first, so a member
  failing and the same member asking for an item cannot interleave.

Modules: ``rules.py`` (the pass rule, marks and sides, pure), ``gate.py`` (cleared or not),
``flow.py`` (a member's next step, submits and feedback), ``setup.py`` (a manager's choices,
the outcomes per member and letting a member in).
"""
