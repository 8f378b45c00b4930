"""Shared test set-up: named users created once per test, small real datasets, and a campaign
scored by a tiny reward model (used by the campaign and the export tests).

Every test runs against the real database chosen by ``DATABASE_URL`` (SQLite by default,
PostgreSQL in CI's second pass).
"""

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from prb_annotate.models import Campaign, Dataset, Pair
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

PASSWORD = "correct-horse-battery"


def pytest_configure() -> None:
    """A fast password hasher: PBKDF2's deliberate slowness costs about a second per test user
    on a busy machine and tests nothing of ours (Django's docs recommend this for tests)."""
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(username: str, *, staff: bool = False) -> User:
    return User.objects.create_user(username, password=PASSWORD, is_staff=staff)


@pytest.fixture
def manager(db: None) -> User:
    """Staff: manages every dataset and campaign."""
    return make_user("manager", staff=True)


@pytest.fixture
def annotator(db: None) -> User:
    return make_user("alice")


@pytest.fixture
def other_annotator(db: None) -> User:
    return make_user("bob")


@pytest.fixture
def outsider(db: None) -> User:
    """Logged in, but member of nothing."""
    return make_user("mallory")


@pytest.fixture
def login() -> Callable[[User], Client]:
    def _login(user: User) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return _login


def make_pairs(dataset: Dataset, count: int, *, category: str = "Lifestyle") -> list[Pair]:
    """``count`` small but complete pairs in the official schema, ids p0000, p0001, ..."""
    pairs = []
    for index in range(count):
        external_id = f"p{index:04d}"
        pairs.append(
            Pair(
                dataset=dataset,
                external_id=external_id,
                category=category,
                question=f"Question {index}: how should I plan my week?",
                profile=[{"id": f"{external_id}-post", "category": category, "text": "I run."}],
                rubric_aspects=[{"aspect": "brevity", "evidence": "short posts", "reason": "busy"}],
                narrative="I want a short plan.",
                chosen=f"A short plan number {index}.",
                rejected=f"A long, detailed plan number {index} with many sections.",
                content_hash=hashlib.sha256(external_id.encode()).hexdigest(),
            )
        )
    return Pair.objects.bulk_create(pairs)


@pytest.fixture
def dataset(db: None) -> Dataset:
    dataset = Dataset.objects.create(name="demo", source="tests")
    make_pairs(dataset, 12)
    return dataset


VALID = {"fit": "chosen", "differentiator": "preference"}
QUALITY_GAP = {"fit": "chosen", "differentiator": "quality", "rejected": 2}


@pytest.fixture(scope="module")
def feature_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The feature reward model of ``tests/support/tiny.py`` (``tests/evaluation/`` has its own,
    saved once per session)."""
    # Imported here: torch and transformers load only where a model is scored.
    from tests.support import tiny

    tokenizer = tiny.make_tokenizer(pad_is_eos=True, template=tiny.EOS_TEMPLATE)
    folder = tmp_path_factory.mktemp("models") / "feature-rm"
    return tiny.save(tiny.feature_reward_model(tokenizer), tokenizer, folder)


@pytest.fixture
def scored_campaign(dataset: Dataset) -> Campaign:
    """Six pairs: p0000-p0003 validated, p0004-p0005 excluded (a quality gap).

    The model prefers answers full of marker words: it is right on p0000-p0002 and p0004,
    wrong on p0003 and p0005.
    """
    from tests.support import tiny

    marker, plain = " ".join(tiny.MARKERS[:6]), " ".join(tiny.PLAIN[:6])
    campaign = make_campaign(dataset)
    raters = annotators(3)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")[:6]):
        model_is_right = index in (0, 1, 2, 4)
        pair.question = " ".join(tiny.PLAIN[10:14])
        pair.chosen, pair.rejected = (marker, plain) if model_is_right else (plain, marker)
        pair.save()
        answers = VALID if index < 4 else QUALITY_GAP
        annotate_all(add_item(campaign, pair), raters, [answers] * 3)
    return campaign
