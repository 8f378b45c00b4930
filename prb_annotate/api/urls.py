"""API URLs, mounted at ``api/`` (the annotator work endpoints are in ``work_urls``)."""

from django.urls import URLPattern, path, re_path
from drf_spectacular.views import SpectacularAPIView

from prb_annotate.api import (
    accounts,
    docs,
    external,
    jobs,
    leaderboard,
    qualification,
    sampling,
    views,
)
from prb_annotate.api.token import obtain_auth_token
from prb_annotate.models import Campaign

urlpatterns: list[URLPattern] = [
    path("", views.ApiRoot.as_view(), name="api_root"),
    path("token/", obtain_auth_token, name="api_token"),
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", docs.api_docs, name="api_docs"),
    path("datasets/", views.DatasetList.as_view(), name="api_dataset_list"),
    path("datasets/<row_id:dataset_id>/", views.DatasetDetail.as_view(), name="api_dataset_detail"),
    path("datasets/<row_id:dataset_id>/pairs/", views.PairList.as_view(), name="api_pair_list"),
    path(
        "datasets/<row_id:dataset_id>/pairs/<row_id:pair_id>/",
        views.PairDetail.as_view(),
        name="api_pair_detail",
    ),
    path(
        "datasets/<row_id:dataset_id>/sample-plan/",
        sampling.DatasetSamplePlan.as_view(),
        name="api_dataset_sample_plan",
    ),
    path("campaigns/", views.CampaignList.as_view(), name="api_campaign_list"),
    path(
        "campaigns/<row_id:campaign_id>/",
        views.CampaignDetail.as_view(),
        name="api_campaign_detail",
    ),
    path(
        "campaigns/<row_id:campaign_id>/start/",
        views.CampaignStatusChange.as_view(target_status=Campaign.Status.ACTIVE),
        name="api_campaign_start",
    ),
    path(
        "campaigns/<row_id:campaign_id>/pause/",
        views.CampaignStatusChange.as_view(target_status=Campaign.Status.PAUSED),
        name="api_campaign_pause",
    ),
    path(
        "campaigns/<row_id:campaign_id>/close/",
        views.CampaignStatusChange.as_view(target_status=Campaign.Status.CLOSED),
        name="api_campaign_close",
    ),
    path(
        "campaigns/<row_id:campaign_id>/members/",
        views.MemberList.as_view(),
        name="api_campaign_members",
    ),
    path(
        "campaigns/<row_id:campaign_id>/annotators/",
        accounts.CampaignAnnotators.as_view(),
        name="api_campaign_annotators",
    ),
    path(
        "campaigns/<row_id:campaign_id>/members/<row_id:annotator_id>/remove/",
        accounts.CampaignMemberRemove.as_view(),
        name="api_campaign_member_remove",
    ),
    path(
        "campaigns/<row_id:campaign_id>/members/<row_id:annotator_id>/set-password-link/",
        accounts.CampaignMemberSetPasswordLink.as_view(),
        name="api_campaign_member_set_password_link",
    ),
    path(
        "campaigns/<row_id:campaign_id>/links/<str:link>/rotate/",
        accounts.CampaignLinkRotate.as_view(),
        name="api_campaign_link_rotate",
    ),
    path(
        "campaigns/<row_id:campaign_id>/reopen-for-replacements/",
        accounts.CampaignReopenForReplacements.as_view(),
        name="api_campaign_reopen",
    ),
    path(
        "campaigns/<row_id:campaign_id>/progress/",
        views.CampaignProgressView.as_view(),
        name="api_campaign_progress",
    ),
    path(
        "campaigns/<row_id:campaign_id>/audit/",
        views.CampaignAuditView.as_view(),
        name="api_campaign_audit",
    ),
    path(
        "campaigns/<row_id:campaign_id>/audit/paper/",
        views.CampaignAuditPaperView.as_view(),
        name="api_campaign_audit_paper",
    ),
    path(
        "campaigns/<row_id:campaign_id>/agreement/",
        views.CampaignAgreementView.as_view(),
        name="api_campaign_agreement",
    ),
    path(
        "campaigns/<row_id:campaign_id>/annotator-quality/",
        views.AnnotatorQualityView.as_view(),
        name="api_campaign_annotator_quality",
    ),
    path(
        "campaigns/<row_id:campaign_id>/exclusions/",
        views.ExclusionList.as_view(),
        name="api_campaign_exclusions",
    ),
    path(
        "campaigns/<row_id:campaign_id>/exclusions/<row_id:annotator_id>/lift/",
        views.ExclusionLift.as_view(),
        name="api_campaign_exclusion_lift",
    ),
    path(
        "campaigns/<row_id:campaign_id>/verdicts/",
        views.VerdictList.as_view(),
        name="api_campaign_verdicts",
    ),
    path(
        "campaigns/<row_id:campaign_id>/pairs/<row_id:pair_id>/adjudications/",
        views.AdjudicationList.as_view(),
        name="api_campaign_pair_adjudications",
    ),
    path(
        "campaigns/<row_id:campaign_id>/adjudication-queue/",
        views.AdjudicationQueue.as_view(),
        name="api_campaign_adjudication_queue",
    ),
    path(
        "campaigns/<row_id:campaign_id>/extend-sample/",
        sampling.CampaignExtendSample.as_view(),
        name="api_campaign_extend_sample",
    ),
    path("campaigns/<row_id:campaign_id>/jobs/", jobs.CampaignJobs.as_view(), name="api_jobs"),
    path("jobs/<row_id:job_id>/", jobs.JobDetail.as_view(), name="api_job"),
    path("jobs/<row_id:job_id>/cancel/", jobs.JobCancel.as_view(), name="api_job_cancel"),
    path("jobs/<row_id:job_id>/file/", jobs.JobFile.as_view(), name="api_job_file"),
    path(
        "campaigns/<row_id:campaign_id>/leaderboard/",
        leaderboard.CampaignLeaderboard.as_view(),
        name="api_campaign_leaderboard",
    ),
    path(
        "campaigns/<row_id:campaign_id>/qualification/",
        qualification.QualificationView.as_view(),
        name="api_campaign_qualification",
    ),
    path(
        "campaigns/<row_id:campaign_id>/qualification/items/<row_id:pair_id>/",
        qualification.QualificationItemView.as_view(),
        name="api_campaign_qualification_item",
    ),
    path(
        "campaigns/<row_id:campaign_id>/qualification/members/",
        qualification.QualificationMembers.as_view(),
        name="api_campaign_qualification_members",
    ),
    path(
        "campaigns/<row_id:campaign_id>/qualification/members/<row_id:annotator_id>/admit/",
        qualification.QualificationAdmit.as_view(),
        name="api_campaign_qualification_admit",
    ),
    path(
        "campaigns/<row_id:campaign_id>/prolific/bonus-rule/",
        qualification.BonusRuleView.as_view(),
        name="api_campaign_prolific_bonus_rule",
    ),
    path(
        "campaigns/<row_id:campaign_id>/prolific/approvals/",
        qualification.ProlificApprovals.as_view(),
        name="api_campaign_prolific_approvals",
    ),
    path(
        "campaigns/<row_id:campaign_id>/prolific/bonuses/",
        qualification.ProlificBonuses.as_view(),
        name="api_campaign_prolific_bonuses",
    ),
    path(
        "campaigns/<row_id:campaign_id>/prolific/payments/",
        qualification.BonusPayments.as_view(),
        name="api_campaign_prolific_payments",
    ),
    path(
        "campaigns/<row_id:campaign_id>/prolific/payments/settle/",
        qualification.BonusPaymentSettle.as_view(),
        name="api_campaign_prolific_settle",
    ),
    path(
        "campaigns/<row_id:campaign_id>/export/",
        views.CampaignExportView.as_view(),
        name="api_campaign_export",
    ),
    path(
        "campaigns/<row_id:campaign_id>/answers/import/",
        external.CampaignAnswersImportView.as_view(),
        name="api_campaign_answers_import",
    ),
    path(
        "campaigns/<row_id:campaign_id>/long-table/",
        external.CampaignLongTableView.as_view(),
        name="api_campaign_long_table",
    ),
    # Last: any other /api/.../ URL (a malformed id, say) gets the API's JSON 404, not the
    # site's HTML page. Only paths ending in a slash, so that APPEND_SLASH still redirects.
    re_path(r"^[\s\S]*/$", views.not_found),
]
