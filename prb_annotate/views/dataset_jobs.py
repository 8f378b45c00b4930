"""The pages of dataset imports' jobs (no campaign; staff), under /datasets/: the same views as a
campaign's jobs (``views/jobs.py``)."""

from django.urls import path

from prb_annotate.views.jobs import campaign_job, job_cancel, job_file, job_remove

urlpatterns = [
    path("jobs/<row_id:job_id>/", campaign_job, name="dataset_job"),
    path("jobs/<row_id:job_id>/cancel/", job_cancel, name="dataset_job_cancel"),
    path("jobs/<row_id:job_id>/remove/", job_remove, name="dataset_job_remove"),
    path("jobs/<row_id:job_id>/file/", job_file, name="dataset_job_file"),
]
