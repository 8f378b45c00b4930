"""API for a study's people: annotator accounts with one-time password links, the campaign's
two links (turned off and on through ``PATCH /api/campaigns/<id>/``, rotated here), and
reopening a closed campaign for replacements. The same services as the campaign pages."""

from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from prb_annotate.api import serializers as api
from prb_annotate.api.parsers import JSONParser
from prb_annotate.api.permissions import managed_campaign
from prb_annotate.campaigns.accounts import (
    MAX_ANNOTATORS,
    AnnotatorEntry,
    AnnotatorListError,
    add_annotators,
    entries_from_rows,
    parse_annotators,
)
from prb_annotate.campaigns.lifecycle import (
    LINKS,
    CampaignSetupError,
    reopen_for_replacements,
    rotate_link,
)
from prb_annotate.campaigns.members import (
    ANSWER_CHOICES,
    MemberError,
    NotYoursToSpeakFor,
    campaign_account_or_404,
    reissue_set_password_link,
    remove_member,
)


class AnnotatorEntrySerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class AddAnnotatorsSerializer(serializers.Serializer):
    """``annotators``, each entry one account (its username is never split, skipped or taken
    for a header), or ``text`` read as the campaign page reads a pasted list. The entries are
    in ``validated_data["entries"]``; a problem is reported under ``annotators.<index>.<field>``
    or under ``text``."""

    annotators = AnnotatorEntrySerializer(many=True, required=False, allow_empty=False)
    text = serializers.CharField(
        required=False,
        max_length=200_000,
        help_text="Instead of a list: usernames as the campaign page takes them (one or more "
        "per line, each optionally followed by an email, or a CSV with a username column).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("annotators" in attrs) == ("text" in attrs):
            raise serializers.ValidationError({"annotators": [gettext("Give annotators or text.")]})
        if len(attrs.get("annotators", ())) > MAX_ANNOTATORS:
            message = gettext("At most %(most)d annotators at once.") % {"most": MAX_ANNOTATORS}
            raise serializers.ValidationError({"annotators": [message]})
        source = "text" if "text" in attrs else "annotators"
        try:
            attrs["entries"] = _entries(attrs)
        except AnnotatorListError as exc:
            raise serializers.ValidationError(list_errors(source, exc)) from exc
        return attrs


def _entries(attrs: dict[str, Any]) -> list[AnnotatorEntry]:
    if "text" in attrs:
        return parse_annotators(str(attrs["text"]))
    return entries_from_rows([(row["username"], row["email"]) for row in attrs["annotators"]])


def list_errors(source: str, error: AnnotatorListError) -> dict[str, list[str]]:
    """The list's problems under the field the list came in: ``text``'s as its "line N: ..."
    lines; a structured list's under ``annotators.<index>.<field>`` (the whole list's under
    ``annotators``)."""
    if source == "text":
        return {"text": error.problems}
    errors: dict[str, list[str]] = {}
    for problem in error.located:
        where = source if problem.line is None else f"{source}.{problem.line}.{problem.field}"
        errors.setdefault(where, []).append(problem.message)
    return errors


class AddedAnnotatorSerializer(serializers.Serializer):
    username = serializers.CharField()
    created = serializers.BooleanField(help_text="The account was made by this request.")
    set_password_url = serializers.CharField(
        allow_blank=True, help_text="The new account's one-time link (empty for others)."
    )
    emailed = serializers.BooleanField()
    already_member = serializers.BooleanField(
        help_text="A member of the campaign already: left in the role they had."
    )


class CampaignAnnotators(APIView):
    """Add annotators, making the accounts that do not exist yet: each new account's one-time
    "set your password" link is in the answer (and mailed when email is configured). All or
    nothing: a bad entry refuses the whole list with 400, naming each problem's entry index and
    field (``annotators``) or line (``text``)."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=AddAnnotatorsSerializer, responses={201: AddedAnnotatorSerializer(many=True)}
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = AddAnnotatorsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entries = body.validated_data["entries"]
        source = "text" if "text" in body.validated_data else "annotators"
        try:
            added = add_annotators(campaign, entries, site=request.build_absolute_uri("/"))
        except AnnotatorListError as exc:
            raise serializers.ValidationError(list_errors(source, exc)) from exc
        rows = AddedAnnotatorSerializer(added, many=True).data
        return Response(rows, status=status.HTTP_201_CREATED)


class RemoveMemberSerializer(serializers.Serializer):
    answers = serializers.ChoiceField(
        choices=list(ANSWER_CHOICES.items()),
        help_text="Whether the audit keeps the member's submitted answers or leaves them out.",
    )


class RemovedMemberSerializer(serializers.Serializer):
    username = serializers.CharField()
    answers = serializers.CharField()
    submitted = serializers.IntegerField(help_text="Their submitted answers, stored either way.")
    freed = serializers.IntegerField(help_text="Reserved items given back to the queue now.")
    left_out = serializers.BooleanField(help_text="Their answers are out of the audit now.")
    statement = serializers.CharField()


class CampaignMemberRemove(APIView):
    """Remove an annotator: their reservations are freed now, and ``answers`` says whether the
    audit keeps their submitted answers (``keep``) or leaves them out (``leave_out``)."""

    parser_classes = [JSONParser]

    @extend_schema(request=RemoveMemberSerializer, responses={200: RemovedMemberSerializer})
    def post(self, request: Request, campaign_id: int, annotator_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = RemoveMemberSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        by = request.user if isinstance(request.user, User) else None
        member = campaign_account_or_404(campaign, annotator_id)
        try:
            removed = remove_member(campaign, member, body.validated_data["answers"], by=by)
        except MemberError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        return Response(RemovedMemberSerializer(removed).data)


class CampaignMemberSetPasswordLink(APIView):
    """A new one-time "set your password" link for an annotator whose account has no password
    yet (the earlier link lost or expired); 400 for an account that cannot have one, 403 for
    one the requester may not speak for (``members.may_speak_for``)."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={201: AddedAnnotatorSerializer})
    def post(self, request: Request, campaign_id: int, annotator_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        member = campaign_account_or_404(campaign, annotator_id)
        site = request.build_absolute_uri("/")
        try:
            row = reissue_set_password_link(campaign, member, site=site, by=request.user)
        except NotYoursToSpeakFor as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc
        except MemberError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        return Response(AddedAnnotatorSerializer(row).data, status=status.HTTP_201_CREATED)


class CampaignLinkRotate(APIView):
    """Give the study link (``study``) or the sign-up invite (``signup``) a new token; the old
    link stops working, accounts made through it keep working."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: api.CampaignSerializer})
    def post(self, request: Request, campaign_id: int, link: str) -> Response:
        campaign = managed_campaign(request, campaign_id)
        if link not in LINKS:
            raise serializers.ValidationError({"link": [f"One of: {', '.join(LINKS)}."]})
        rotate_link(campaign, link)
        return Response(api.CampaignSerializer(campaign).data)


class CampaignReopenForReplacements(APIView):
    """Make a closed campaign active again because exclusions left pairs short of answers;
    those pairs get replacement slots. 400 when the campaign is not closed or none lacks
    answers."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: api.CampaignSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        try:
            reopen_for_replacements(campaign)
        except CampaignSetupError as exc:
            raise serializers.ValidationError({"status": [str(exc)]}) from exc
        return Response(api.CampaignSerializer(campaign).data)
