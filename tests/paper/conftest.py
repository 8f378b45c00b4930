"""The paper tests' campaign."""

import pytest
from django.contrib.auth.models import User

from prb_annotate.datasets.importing import import_path
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE, DEMO_FLAWS
from prb_annotate.models import Campaign
from prb_annotate.simulation.demo import create_simulated_campaign


@pytest.fixture
def finished(db: None, manager: User) -> Campaign:
    """The demo's finished campaign: simulated annotators, gold items, one left out by gold."""
    dataset = import_path(DEMO_FIXTURE, "prb-demo").dataset
    return create_simulated_campaign(dataset, manager, DEMO_FLAWS)
