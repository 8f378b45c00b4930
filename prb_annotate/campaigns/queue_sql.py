"""The queue's statements, in plain SQL for the hot path (``db/plainsql.py`` says why): the
member with their history, the item with its slots, the reservation written or reused.

Invariant: each statement reads or writes the rows ``campaigns/assignment.py`` says it does, and
the placeholders ``{}`` are filled there (the participant scope, the consent and newcomer
columns, the database's row lock), never with values from a request.
"""

MEMBER_LOCK_SQL = """
SELECT m.id FROM prb_annotate_membership m
WHERE m.campaign_id = %s AND m.user_id = %s AND m.role = 'annotator' AND {}
"""

# The consent text a member has still to accept: the campaign's, until they accepted it (then
# ''); one column of the statements below, so the consent check costs no statement of its own.
CONSENT_PENDING_COLUMN = "CASE WHEN m.consent_given_at IS NULL THEN c.consent_text ELSE '' END"

# Whether the member is a newcomer (see the module): 0 when not (or the campaign does not slow
# first items), NEWCOMER, or NEWCOMER_WITH_GOLD where gold items can prove them. The campaign's
# setting and the member's proof are read first, so most members cost no subquery.
NEWCOMER = 1
NEWCOMER_WITH_GOLD = 2
NEWCOMER_TEMPLATE = """
CASE WHEN c.first_reservation_minutes = 0 OR m.proven_at IS NOT NULL THEN 0
     WHEN NOT EXISTS (SELECT 1 FROM prb_annotate_invitejoin j
                      WHERE j.campaign_id = m.campaign_id AND j.user_id = m.user_id) THEN 0
     WHEN EXISTS (SELECT 1 FROM prb_annotate_campaignitem g
                  WHERE g.campaign_id = m.campaign_id AND g.kind = 'gold') THEN {with_gold}
     ELSE {newcomer} END
"""
NEWCOMER_COLUMN = NEWCOMER_TEMPLATE.format(with_gold=NEWCOMER_WITH_GOLD, newcomer=NEWCOMER)

# The network the member's account came from through the invite link (``network_share.py``),
# NULL for an account made any other way.
NETWORK_COLUMN = """
(SELECT j.address FROM prb_annotate_invitejoin j
 WHERE j.campaign_id = m.campaign_id AND j.user_id = m.user_id ORDER BY j.id LIMIT 1)
"""

# The regular slots the accounts the link made from one network hold in a campaign: answered,
# or reserved and not lapsed. Run only for a member the link made, before a new reservation:
# as a column of MEMBER_SQL its planning alone cost every member's cycle a fifth more
# PostgreSQL CPU (bench/annotate_load.py).
NETWORK_HELD_SQL = """
SELECT COUNT(DISTINCT a.id)
FROM prb_annotate_invitejoin n
JOIN prb_annotate_assignment a ON a.annotator_id = n.user_id AND a.campaign_id = n.campaign_id
JOIN prb_annotate_campaignitem i ON i.id = a.item_id
WHERE n.campaign_id = %s AND n.address = %s AND i.kind = 'regular'
  AND (a.status = 'submitted' OR (a.status = 'reserved' AND a.expires_at > %s))
"""

# The campaign, for one of its annotators, with their history in it: submitted, submitted
# showing the chosen answer on A, reservations (live or lapsed), expired rows, whether they are
# a newcomer, the network the invite link made their account from; whether they are cleared
# for regular items (qualification/gate.py) and the consent they owe.
MEMBER_SQL = """
SELECT {},
       h.submitted, h.shown_a, h.reserved_rows, h.expired_rows, {}, {}, {}, {}
FROM prb_annotate_membership m JOIN prb_annotate_campaign c ON c.id = m.campaign_id
CROSS JOIN (
    SELECT COALESCE(SUM(CASE WHEN status = 'submitted' THEN 1 ELSE 0 END), 0) AS submitted,
           COALESCE(SUM(CASE WHEN status = 'submitted' AND chosen_position = 'A'
                        THEN 1 ELSE 0 END), 0) AS shown_a,
           COALESCE(SUM(CASE WHEN status = 'reserved' THEN 1 ELSE 0 END), 0) AS reserved_rows,
           COALESCE(SUM(CASE WHEN status = 'expired' THEN 1 ELSE 0 END), 0) AS expired_rows
    FROM prb_annotate_assignment
    WHERE campaign_id = %s AND annotator_id = %s
) h
WHERE m.campaign_id = %s AND m.user_id = %s AND m.role = 'annotator' AND {}
"""

# Before the transaction (SQLite): whether the caller is an annotator of the campaign, its
# status and keys for the plan, whether they hold a live reservation and whether they still owe
# consent (no plan needed then).
PLAN_INPUTS_SQL = """
SELECT c.status, c.annotations_per_pair, c.invite_token,
       EXISTS (SELECT 1 FROM prb_annotate_assignment a
               WHERE a.campaign_id = c.id AND a.annotator_id = m.user_id
                 AND a.status = 'reserved' AND a.expires_at > %s),
       {}
FROM prb_annotate_membership m JOIN prb_annotate_campaign c ON c.id = m.campaign_id
WHERE m.campaign_id = %s AND m.user_id = %s AND m.role = 'annotator' AND {}
"""

OWN_EXPIRED_SQL = """
SELECT id FROM prb_annotate_assignment
WHERE campaign_id = %s AND annotator_id = %s AND status = 'expired'
"""

ITEM_LOCK_SQL = "SELECT id FROM prb_annotate_campaignitem WHERE id = %s"

# An item with its pair and its slots: occupied, occupied showing chosen on A, lapsed
# reservations not yet marked expired, rows of this annotator that keep the item from them
# (all but expired ones), and their expired row, which a new reservation reuses.
ITEM_SQL = """
SELECT {}, {},
       s.occupied, s.shown_a, s.stale, s.own, s.own_expired_id
FROM prb_annotate_campaignitem i JOIN prb_annotate_pair p ON p.id = i.pair_id
CROSS JOIN (
    SELECT COALESCE(SUM(CASE WHEN status = 'submitted'
                                  OR (status = 'reserved' AND expires_at > %s)
                        THEN 1 ELSE 0 END), 0) AS occupied,
           COALESCE(SUM(CASE WHEN chosen_position = 'A' AND (status = 'submitted'
                                  OR (status = 'reserved' AND expires_at > %s))
                        THEN 1 ELSE 0 END), 0) AS shown_a,
           COALESCE(SUM(CASE WHEN status = 'reserved' AND expires_at <= %s
                        THEN 1 ELSE 0 END), 0) AS stale,
           COALESCE(SUM(CASE WHEN annotator_id = %s AND status <> 'expired'
                        THEN 1 ELSE 0 END), 0) AS own,
           MAX(CASE WHEN annotator_id = %s AND status = 'expired' THEN id END) AS own_expired_id
    FROM prb_annotate_assignment WHERE item_id = %s
) s
WHERE i.id = %s
"""

REUSE_SQL = """
UPDATE prb_annotate_assignment
SET status = 'reserved', chosen_position = %s, reserved_at = %s, expires_at = %s
WHERE id = %s AND status = 'expired'
"""

INSERT_SQL = """
INSERT INTO prb_annotate_assignment
    (campaign_id, item_id, annotator_id, chosen_position, status, reserved_at, expires_at,
     skip_reason)
VALUES (%s, %s, %s, %s, 'reserved', %s, %s, '')
RETURNING id
"""
