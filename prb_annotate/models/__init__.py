"""Rows and single-object rules, one module per capability. Workflows that touch several
models live in their own modules (importing, assignment, annotating, audit, exporting).

Every model is imported here: Django finds an app's models in ``<app>.models``, and the code
imports them as ``from prb_annotate.models import Campaign``."""

from prb_annotate.models.access import FailedLogin, InviteJoin, KnownLogin, Participant
from prb_annotate.models.annotations import Annotation, AnswerDraft, Assignment
from prb_annotate.models.campaigns import (
    RAISED_SLOTS_SQL,
    BonusPayment,
    Campaign,
    CampaignItem,
    Membership,
    default_quality_criteria,
    new_invite_token,
)
from prb_annotate.models.datasets import Dataset, Pair
from prb_annotate.models.decisions import Adjudication, AnnotatorExclusion
from prb_annotate.models.evaluation import EvaluationRun, ModelAnswer, PairScore
from prb_annotate.models.imports import AnswerImport, ExternalAnnotator
from prb_annotate.models.jobs import Job
from prb_annotate.models.qualification import (
    QualificationAnswer,
    QualificationItem,
    QualificationRecord,
)

__all__ = [
    "RAISED_SLOTS_SQL",
    "Adjudication",
    "Annotation",
    "AnnotatorExclusion",
    "AnswerDraft",
    "AnswerImport",
    "Assignment",
    "BonusPayment",
    "Campaign",
    "CampaignItem",
    "Dataset",
    "EvaluationRun",
    "ExternalAnnotator",
    "FailedLogin",
    "InviteJoin",
    "Job",
    "KnownLogin",
    "Membership",
    "ModelAnswer",
    "Pair",
    "PairScore",
    "Participant",
    "QualificationAnswer",
    "QualificationItem",
    "QualificationRecord",
    "default_quality_criteria",
    "new_invite_token",
]
