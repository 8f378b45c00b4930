"""URLs of the annotator-work API (mounted under /api/)."""

from django.urls import path

from prb_annotate.api import qualification, work

urlpatterns = [
    path("campaigns/<row_id:campaign_id>/next/", work.next_item, name="api_next"),
    path("campaigns/<row_id:campaign_id>/my-progress/", work.my_progress, name="api_my_progress"),
    path("campaigns/<row_id:campaign_id>/consent/", work.consent, name="api_consent"),
    path("assignments/<row_id:assignment_id>/submit/", work.submit_answers, name="api_submit"),
    path("assignments/<row_id:assignment_id>/skip/", work.skip_item, name="api_skip"),
    path(
        "qualification-items/<row_id:item_id>/submit/",
        qualification.submit_qualification_answer,
        name="api_qualification_submit",
    ),
    path(
        "campaigns/<row_id:campaign_id>/my-qualification/",
        qualification.my_qualification,
        name="api_my_qualification",
    ),
]
