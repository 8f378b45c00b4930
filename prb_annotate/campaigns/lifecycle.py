"""Campaigns: creation from a dataset, members and invite links (turned off, rotated), status
changes (and reopening a closed campaign for replacements), quotas.

Who gets which item next lives in ``assignment.py``; submitting answers in ``annotating.py``.
"""

import random
from collections.abc import Collection, Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Field

from prb_annotate.audit.active_sample import SampleDesign
from prb_annotate.audit.exclusions import pairs_short_of_answers, request_replacement_annotations
from prb_annotate.audit.sampling import PlanTargets, SamplePlan
from prb_annotate.campaigns import planned_sample
from prb_annotate.campaigns.editing import pay_errors
from prb_annotate.campaigns.qualification import setup as qualification_setup
from prb_annotate.campaigns.setting_fields import CAMPAIGN, PAY_SETTINGS
from prb_annotate.models import (
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    Dataset,
    Membership,
    Participant,
    new_invite_token,
)

DEFAULT_GOLD_ANSWERS: dict[str, str] = {
    "rubric_fit": Annotation.RubricFit.CHOSEN,
    "differentiator": Annotation.Differentiator.PREFERENCE,
}

# The invite links' switches: a campaign may start with a link off (set_link_enabled turns it
# on or off later); an external campaign has both off.
LINK_SWITCHES = ("study_link_enabled", "signup_link_enabled")

# Campaign fields that create_campaign accepts as keyword settings: every setting declared in
# setting_fields.py but those it takes as arguments of their own, and the settings that are
# declared elsewhere.
CAMPAIGN_SETTINGS = frozenset(
    set(CAMPAIGN) - {"name", "annotations_per_pair", "seed", "gold_rate", "sample", "external"}
    | {"quality_criteria", "rating_scale_max", "qualification_rule", "bonus_rule"}
)

# Allowed status changes: pause and resume an active campaign, close it for good.
TRANSITIONS: dict[str, frozenset[str]] = {
    Campaign.Status.DRAFT: frozenset({Campaign.Status.ACTIVE, Campaign.Status.CLOSED}),
    Campaign.Status.ACTIVE: frozenset({Campaign.Status.PAUSED, Campaign.Status.CLOSED}),
    Campaign.Status.PAUSED: frozenset({Campaign.Status.ACTIVE, Campaign.Status.CLOSED}),
    Campaign.Status.CLOSED: frozenset(),
}

PROLIFIC_USERNAME_PREFIX = "prolific-"


class CampaignSetupError(ValueError):
    """A campaign cannot be created or changed as asked; the message says why."""


class InviteError(Exception):
    """An invite link cannot be used."""


class InvalidInvite(InviteError):
    """No campaign has this invite token (views answer 404)."""


class InviteClosed(InviteError):
    """The campaign behind this invite is closed."""


class InviteNeedsLogin(InviteError):
    """No account that may join: the visitor must log in (or come with a participant id)."""


def check_settings(settings: Mapping[str, Any]) -> None:
    """Each setting against its model field's validators (majority_threshold >= 0.5, ...), and
    the pay's three settings together or none (``editing.pay_errors``)."""
    pay = pay_errors({name: settings.get(name) for name in PAY_SETTINGS})
    if pay:
        raise CampaignSetupError("; ".join(f"{name}: {why}" for name, why in pay.items()))
    for name, value in settings.items():
        field = Campaign._meta.get_field(name)
        if value is None or not isinstance(field, Field):
            continue
        try:
            field.run_validators(value)
        except ValidationError as error:
            raise CampaignSetupError(f"{name}: {' '.join(error.messages)}") from error


def create_campaign(
    dataset: Dataset,
    name: str,
    *,
    k: int = 3,
    sample: int | None = None,
    sample_targets: PlanTargets | None = None,
    sample_design: SampleDesign | None = None,
    gold_pair_ids: Collection[str] | Mapping[str, Mapping[str, str]] = (),
    gold_rate: float = 0.0,
    practice_pairs: qualification_setup.ItemChoices = (),
    qualification_pairs: qualification_setup.ItemChoices = (),
    seed: int = 0,
    created_by: User | None = None,
    activate: bool = False,
    external: bool = False,
    pair_ids: Collection[str] | None = None,
    **settings: Any,
) -> Campaign:
    """Create a campaign over ``dataset`` with one item per pair (or a seeded sample).

    ``gold_pair_ids`` names pairs (external ids) that become gold items; give a mapping
    ``{external_id: {"rubric_fit": ..., "differentiator": ...}}`` to set their expected answers,
    otherwise they expect the dataset's claim (chosen fits the rubric, the difference is
    preference). Gold pairs are never part of the regular sample. Every item gets a seeded
    random ``order_key``, so the same seed gives the same queue.

    ``sample_targets`` plans a stratified sample for a target precision instead of a fixed
    ``sample`` size (``planned_sample.py``); the campaign keeps the plan in ``sample_plan``.
    Raises ``planned_sample.SamplePlanError`` for targets that cannot be planned for.
    ``sample_design`` draws it actively (``audit/active_sample.py``) from the newest
    model-annotator run covering the dataset, each item keeping its inclusion probability;
    a ``SamplePlanError`` on ``design`` when no run covers it.

    ``practice_pairs`` and ``qualification_pairs`` name the pairs members answer before the
    queue (``qualification/``), set apart from the sample like gold pairs: ids (expecting the
    dataset's claim) or ``{id: {"expected_answers": {...}, "explanations": {...}}}``; the pass
    rule is the ``qualification_rule`` setting.

    ``pair_ids`` keeps the regular pairs to those record ids.

    ``study_link_enabled`` / ``signup_link_enabled`` False start the study link or the sign-up
    invite off. An ``external`` campaign has no queue: its answers come from files
    (``external/importing.py``), so it is closed from the start, never activated, and has both
    links off (asking for one on is a CampaignSetupError).
    """
    if external and activate:
        raise CampaignSetupError("an external campaign has no queue to activate")
    _check_arguments(name, k, gold_rate, sample, sample_targets, settings)
    if external:
        settings = _without_links(settings)
    if sample_design is not None and sample_design.active and sample_targets is None:
        raise CampaignSetupError("an active sample design needs sample targets (a half-width)")
    gold = _gold_answers_by_id(gold_pair_ids)
    pairs = {p.external_id: p.pk for p in dataset.pairs.only("pk", "external_id")}
    missing = sorted(set(gold) - set(pairs))
    if missing:
        raise CampaignSetupError(f"gold pairs not in dataset {dataset.name}: {', '.join(missing)}")
    screening = _screening_specs(dataset, pairs, gold, practice_pairs, qualification_pairs)
    set_apart = set(gold) | {spec.external_id for spec in screening}

    rng = random.Random(seed)
    candidates = set(pairs) - set_apart
    if pair_ids is not None:
        candidates &= set(pair_ids)
    planned = (sample_targets, sample_design)
    regular_ids, plan, inclusion = _regular_pair_ids(
        dataset, sorted(candidates), set_apart, rng, sample, planned, k, seed
    )
    entries = _ordered_entries(regular_ids, gold, rng)
    status = Campaign.Status.ACTIVE if activate else Campaign.Status.DRAFT
    if external:
        status = Campaign.Status.CLOSED
    try:
        with transaction.atomic():
            campaign = Campaign.objects.create(
                dataset=dataset,
                name=name,
                annotations_per_pair=k,
                gold_rate=gold_rate,
                seed=seed,
                created_by=created_by,
                status=status,
                sample_plan=None if plan is None else plan.as_json(),
                external=external,
                **settings,
            )
            CampaignItem.objects.bulk_create(
                [
                    CampaignItem(
                        campaign=campaign,
                        pair_id=pairs[external_id],
                        kind=kind,
                        gold_answers=answers,
                        order_key=order_key,
                        inclusion_probability=inclusion.get(external_id),
                    )
                    for external_id, kind, answers, order_key in entries
                ],
                batch_size=500,
            )
            qualification_setup.create_items(campaign, screening, pairs)
    except qualification_setup.QualificationSetupError as error:
        raise CampaignSetupError(str(error)) from error
    except IntegrityError as error:
        # Two managers creating the same name at once: the unique name decides.
        raise CampaignSetupError(f"a campaign named {name!r} already exists") from error
    return campaign


def _without_links(settings: Mapping[str, Any]) -> dict[str, Any]:
    """An external campaign has nobody to invite: its study link and sign-up invite start off,
    and answer as no link whatever their flags say (the join and sign-up pages ask for a
    campaign that is not external). Asking for a link on is refused, not quietly undone."""
    turned_on = [switch for switch in LINK_SWITCHES if settings.get(switch)]
    if turned_on:
        raise CampaignSetupError(
            f"{turned_on[0]}: an external campaign has no links to turn on (its answers come "
            "from files)"
        )
    return {**settings, **dict.fromkeys(LINK_SWITCHES, False)}


def _check_arguments(
    name: str,
    k: int,
    gold_rate: float,
    sample: int | None,
    sample_targets: PlanTargets | None,
    settings: Mapping[str, Any],
) -> None:
    unknown = set(settings) - CAMPAIGN_SETTINGS
    if unknown:
        raise TypeError(f"unknown campaign settings: {', '.join(sorted(unknown))}")
    if k < 1:
        raise CampaignSetupError("k (annotations per pair) must be at least 1")
    if not 0.0 <= gold_rate <= 1.0:
        raise CampaignSetupError("gold rate must be between 0 and 1")
    if sample is not None and sample < 1:
        raise CampaignSetupError("sample must be at least 1")
    if sample is not None and sample_targets is not None:
        raise CampaignSetupError("give a sample size or sample targets, not both")
    if Campaign.objects.filter(name=name).exists():
        raise CampaignSetupError(f"a campaign named {name!r} already exists")
    check_settings(settings)


def _regular_pair_ids(
    dataset: Dataset,
    candidates: list[str],
    set_apart: set[str],
    rng: random.Random,
    sample: int | None,
    planned: tuple[PlanTargets | None, SampleDesign | None],
    k: int,
    seed: int,
) -> tuple[list[str], SamplePlan | None, dict[str, float]]:
    """The regular items' record ids (every candidate, a seeded sample, or a planned sample),
    the sample plan when there is one, and an active draw's inclusion probabilities."""
    plan: SamplePlan | None = None
    regular_ids = candidates
    inclusion: dict[str, float] = {}
    sample_targets, design = planned
    if sample_targets is not None:
        regular_ids, plan, inclusion = planned_sample.planned_pair_ids(
            dataset, sample_targets, k, seed, leave_out=set_apart, design=design
        )
    elif sample is not None:
        if sample > len(candidates):
            raise CampaignSetupError(
                f"sample of {sample} asked, but the dataset has {len(candidates)} pairs"
            )
        regular_ids = sorted(rng.sample(candidates, sample))
    if not regular_ids:
        raise CampaignSetupError(f"dataset {dataset.name} has no pairs to annotate")
    return regular_ids, plan, inclusion


def _ordered_entries(
    regular_ids: list[str], gold: Mapping[str, dict[str, str]], rng: random.Random
) -> list[tuple[str, str, dict[str, str] | None, int]]:
    """(record id, kind, gold answers, order key) per item. The keys are a seeded
    permutation: distinct, so the queue order never depends on row ids."""
    entries: list[tuple[str, str, dict[str, str] | None]] = [
        (external_id, CampaignItem.Kind.REGULAR, None) for external_id in regular_ids
    ]
    entries += [(gid, CampaignItem.Kind.GOLD, answers) for gid, answers in sorted(gold.items())]
    order = list(range(len(entries)))
    rng.shuffle(order)
    return [(*entry, key) for entry, key in zip(entries, order, strict=True)]


def _screening_specs(
    dataset: Dataset,
    pairs: Mapping[str, int],
    gold: Mapping[str, Any],
    practice: qualification_setup.ItemChoices,
    qualification: qualification_setup.ItemChoices,
) -> list[qualification_setup.ItemSpec]:
    try:
        specs = qualification_setup.item_specs(practice, qualification)
    except qualification_setup.QualificationSetupError as error:
        raise CampaignSetupError(str(error)) from error
    chosen = {spec.external_id for spec in specs}
    missing = sorted(chosen - set(pairs))
    if missing:
        raise CampaignSetupError(
            f"practice or qualification pairs not in dataset {dataset.name}: {', '.join(missing)}"
        )
    both = sorted(chosen & set(gold))
    if both:
        raise CampaignSetupError(
            f"gold pairs cannot be practice or qualification: {', '.join(both)}"
        )
    return specs


def _gold_answers_by_id(
    gold_pair_ids: Collection[str] | Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, str]]:
    if isinstance(gold_pair_ids, Mapping):
        result = {}
        for external_id, answers in gold_pair_ids.items():
            result[str(external_id)] = _checked_gold_answers(str(external_id), dict(answers))
        return result
    if isinstance(gold_pair_ids, str):
        raise TypeError("gold_pair_ids must be a collection of ids, not one string")
    return {str(external_id): dict(DEFAULT_GOLD_ANSWERS) for external_id in gold_pair_ids}


def _checked_gold_answers(external_id: str, answers: dict[str, str]) -> dict[str, str]:
    allowed = {
        "rubric_fit": set(Annotation.RubricFit.values),
        "differentiator": set(Annotation.Differentiator.values),
        "confidence": set(Annotation.Confidence.values),
    }
    if not answers:
        raise CampaignSetupError(f"gold pair {external_id}: no expected answers given")
    for key, value in answers.items():
        if key not in allowed:
            raise CampaignSetupError(f"gold pair {external_id}: unknown answer field {key!r}")
        if value not in allowed[key]:
            raise CampaignSetupError(f"gold pair {external_id}: {key} cannot be {value!r}")
    return answers


def add_member(
    campaign: Campaign,
    user: User,
    role: str = Membership.Role.ANNOTATOR,
    *,
    participant_id: str = "",
    study_id: str = "",
    session_id: str = "",
) -> Membership:
    """Make ``user`` a member with ``role``; calling it again updates the role and any ids given.

    An account made by an invite link stays an annotator of its own campaign (CampaignSetupError
    for anything else): it has no password, so its owner was never proven beyond that campaign.
    """
    if role not in Membership.Role.values:
        raise CampaignSetupError(f"unknown role {role!r}")
    scope = Participant.objects.filter(user_id=user.pk).values_list("campaign_id", flat=True)
    joined = scope.first()
    if joined is not None and (joined != campaign.pk or role != Membership.Role.ANNOTATOR):
        raise CampaignSetupError(
            f"{user.get_username()} joined campaign {joined} through its invite link "
            "and can only annotate that campaign"
        )
    ids = {"participant_id": participant_id, "study_id": study_id, "session_id": session_id}
    membership, created = _get_or_create_membership(campaign, user, role, ids)
    if not created:
        changed = {field: value for field, value in ids.items() if value}
        if membership.role != role:
            changed["role"] = role
        if changed:
            for field, value in changed.items():
                setattr(membership, field, value)
            membership.save(update_fields=list(changed))
    return membership


def _get_or_create_membership(
    campaign: Campaign, user: User, role: str, ids: dict[str, str]
) -> tuple[Membership, bool]:
    # get_or_create retries the get when a concurrent request inserted the same row first
    # (the unique (campaign, user) constraint decides), so a double click makes one member.
    return Membership.objects.get_or_create(
        campaign=campaign, user=user, defaults={"role": role, **ids}
    )


def join_by_invite(token: str, *, user: User | None) -> Membership:
    """Join the campaign behind an invite link as an annotator, with a logged-in account.

    Joining again changes nothing; an existing manager stays a manager. Anonymous study
    participants join through ``joining.join_as_participant`` instead, and an account made that
    way for another campaign cannot join this one.

    Raises InvalidInvite (unknown token), InviteClosed or InviteNeedsLogin.
    """
    campaign = campaign_for_token(token)
    if campaign.status == Campaign.Status.CLOSED:
        raise InviteClosed("This campaign is closed.")
    if user is None or _participant_elsewhere(user, campaign):
        raise InviteNeedsLogin("Log in to join this campaign.")
    membership, _ = _get_or_create_membership(campaign, user, Membership.Role.ANNOTATOR, {})
    return membership


def open_link_campaign(link: str, token: str) -> Campaign | None:
    """The campaign whose ``link`` (``study`` or ``signup``) carries ``token`` and is on, or
    None: a link turned off, or an external campaign's (which has nobody to invite), answers
    as a link that never existed."""
    if not token or len(token) > 64:
        return None
    token_field, enabled_field = LINKS[link]
    # The token is the unique lookup key; tokens are 256-bit random, so the index lookup
    # reveals nothing useful about other tokens.
    return Campaign.objects.filter(
        **{token_field: token, enabled_field: True}, external=False
    ).first()


def campaign_for_token(token: str) -> Campaign:
    """The campaign whose study link carries ``token``; InvalidInvite when none does or the
    link is turned off (the same answer, so a turned-off link tells nothing)."""
    campaign = open_link_campaign("study", token)
    if campaign is None:
        raise InvalidInvite("No such invite.")
    return campaign


# The campaign's two links: the study link (Prolific) and the sign-up invite, by name.
LINKS: dict[str, tuple[str, str]] = {
    "study": ("invite_token", "study_link_enabled"),
    "signup": ("signup_token", "signup_link_enabled"),
}


def set_link_enabled(campaign: Campaign, link: str, enabled: bool) -> Campaign:
    """Turn the study link or the sign-up invite on or off; off, it answers like no link."""
    _, flag = _link_fields(link)
    setattr(campaign, flag, enabled)
    campaign.save(update_fields=[flag])
    return campaign


def rotate_link(campaign: Campaign, link: str) -> Campaign:
    """Give the study link or the sign-up invite a new token: the old link stops working.

    Accounts already made through it keep working; only new arrivals need the new link.
    """
    token, _ = _link_fields(link)
    setattr(campaign, token, new_invite_token())
    campaign.save(update_fields=[token])
    return campaign


def _link_fields(link: str) -> tuple[str, str]:
    if link not in LINKS:
        raise CampaignSetupError(f"unknown link {link!r} (study or signup)")
    return LINKS[link]


def _participant_elsewhere(user: User, campaign: Campaign) -> bool:
    """Whether an invite link made ``user`` for a campaign other than ``campaign``."""
    return Participant.objects.filter(user_id=user.pk).exclude(campaign=campaign).exists()


def set_status(campaign: Campaign, status: str) -> Campaign:
    """Move the campaign to ``status`` (pause, resume, close); setting the same status is a no-op.

    Raises CampaignSetupError for a transition that is not allowed (closing is final).
    """
    with transaction.atomic():
        # Lock the row so that two managers pressing different buttons apply one after the other
        # and each checks its transition against the status the other left.
        current = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if status not in Campaign.Status.values:
            raise CampaignSetupError(f"unknown status {status!r}")
        if status != current.status:
            if status not in TRANSITIONS[current.status]:
                raise CampaignSetupError(f"a {current.status} campaign cannot become {status}")
            current.status = status
            current.save(update_fields=["status"])
    campaign.status = current.status
    return campaign


def reopen_for_replacements(campaign: Campaign) -> int:
    """Make a closed campaign active again because exclusions left pairs short of answers, and
    give those pairs their replacement slots; returns how many pairs got slots.

    Closing is otherwise final; this is its one way back, and only for this reason.
    Raises CampaignSetupError when the campaign is not closed or no pair lacks answers.
    """
    with transaction.atomic():
        current = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if current.external:
            raise CampaignSetupError("an external campaign has no queue to reopen")
        if current.status != Campaign.Status.CLOSED:
            raise CampaignSetupError(
                f"only a closed campaign is reopened for replacements; this one is {current.status}"
            )
        if not pairs_short_of_answers(current):
            raise CampaignSetupError("no pair lacks answers because of an exclusion")
        current.status = Campaign.Status.ACTIVE
        current.save(update_fields=["status"])
    campaign.status = current.status
    return request_replacement_annotations(current)


def submitted_count(campaign: Campaign, user: User) -> int:
    """Items this user has submitted in the campaign (gold included; revisions count once)."""
    return Assignment.objects.filter(
        campaign=campaign, annotator=user, status=Assignment.Status.SUBMITTED
    ).count()


def quota_done(campaign: Campaign, user: User) -> bool:
    """Whether the user has submitted as many items as the campaign's per-annotator quota."""
    if campaign.quota_per_annotator is None:
        return False
    return submitted_count(campaign, user) >= campaign.quota_per_annotator
