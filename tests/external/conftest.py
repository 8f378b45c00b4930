from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.campaigns.external.copies import external_copy
from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.export import export_split
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE, DEMO_FLAWS
from prb_annotate.models import Campaign, Dataset
from prb_annotate.simulation.demo import create_simulated_campaign


@pytest.fixture
def demo_dataset(db: None) -> Dataset:
    return import_path(DEMO_FIXTURE, "prb-demo").dataset


@pytest.fixture
def finished(demo_dataset: Dataset, manager: User) -> Campaign:
    """The demo's finished campaign: simulated annotators, gold items, one left out by gold."""
    return create_simulated_campaign(demo_dataset, manager, DEMO_FLAWS)


@pytest.fixture
def exported(finished: Campaign, tmp_path: Path) -> Path:
    """``finished``'s export of all its pairs, JSON Lines."""
    export_split(finished, tmp_path / "export", subset="all", fmt="jsonl")
    return tmp_path / "export"


@pytest.fixture
def copy(finished: Campaign, manager: User) -> Campaign:
    return external_copy(finished, "imported copy", manager)
