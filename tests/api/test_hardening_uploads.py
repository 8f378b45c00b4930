"""Uploads: a file over ``PRB_UPLOAD_MAX_BYTES`` is a 413 naming the limit, a body announced
larger is refused before it is read, an uploaded Parquet file may not expand past
``PRB_UPLOAD_MAX_EXPANDED_BYTES`` when read, and JSON nested 1,000 deep (the sample-plan body,
a CSV cell of ``profile`` or ``rubric_aspects``) is a 400 naming the line and field."""

import io
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from prb_annotate.datasets.importing import ImportFailed, import_path, import_upload
from prb_annotate.models import Dataset
from prb_annotate.security.jsondepth import MAX_JSON_DEPTH

LIMIT = 64 * 1024
ROW = b'{"question": "Why?", "chosen": "Because.", "rejected": "Dunno."}\n'


def upload(client: Client, name: str, content: bytes) -> Any:
    return client.post("/api/datasets/", {"file": SimpleUploadedFile(name, content), "name": "up"})


@override_settings(PRB_UPLOAD_MAX_BYTES=LIMIT)
def test_it_refuses_a_file_over_the_limit_with_413_naming_it(manager: User, login) -> None:
    client = login(manager)
    over = b"".join(ROW.replace(b"Why?", f"Why {index}?".encode()) for index in range(LIMIT // 60))
    assert LIMIT < len(over) < LIMIT + 64 * 1024  # inside the form's slack: the file is checked
    response = upload(client, "big.jsonl", over)
    assert response.status_code == 413
    assert response.json()["detail"] == (
        "The request is larger than this server accepts: uploads may be at most 64 KiB "
        "(PRB_UPLOAD_MAX_BYTES)."
    )
    assert "file" in response.json()["errors"]
    assert not Dataset.objects.exists()
    # Far over: refused from the Content-Length alone, on the API and on any page.
    far = upload(client, "far.jsonl", over * 3)
    assert far.status_code == 413
    assert "PRB_UPLOAD_MAX_BYTES" in far.json()["detail"]
    page = client.post("/campaigns/new/", {"x": "y" * (3 * LIMIT)})
    assert page.status_code == 413
    assert "at most 64 KiB" in page.content.decode()
    # In the reader's language on a page (it was English on a Korean page); the API's stays
    # English, as everything under /api/.
    korean = client.post("/campaigns/new/", {"x": "y" * (3 * LIMIT)}, HTTP_ACCEPT_LANGUAGE="ko")
    assert "업로드는 최대 64 KiB까지" in korean.content.decode()
    api = client.post("/api/datasets/", {"x": "y" * (3 * LIMIT)}, HTTP_ACCEPT_LANGUAGE="ko")
    assert api.json()["detail"].startswith("The request is larger than this server accepts")
    # Under the limit: imported.
    assert upload(client, "small.jsonl", ROW).status_code == 201


def dictionary_bomb(rows: int, value_bytes: int) -> bytes:
    """A Parquet file of ``rows`` records whose question is one long text stored once in a
    dictionary page, compressed: a few KB that decode to rows x value_bytes."""
    question = pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, pa.int32()), pa.array(["a" * value_bytes])
    )
    table = pa.table({"question": question, "chosen": ["x"] * rows, "rejected": ["y"] * rows})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=True)
    return sink.getvalue()


@override_settings(PRB_UPLOAD_MAX_EXPANDED_BYTES=1024 * 1024)
def test_it_stops_reading_a_parquet_upload_that_expands_past_the_budget(db: None) -> None:
    # The footer already declares more than the budget (one 2 MB text, compressed).
    declared = dictionary_bomb(1, 2 * 1024 * 1024)
    assert len(declared) < 10_000
    with pytest.raises(ImportFailed) as refused:
        import_upload(declared, "declared.parquet", "bomb")
    assert "expands to more than 1 MiB" in str(refused.value)
    assert "PRB_UPLOAD_MAX_EXPANDED_BYTES" in str(refused.value)
    # The footer is small (the text is stored once), the rows point at it 500 times: 50 MB.
    repeated = dictionary_bomb(500, 100_000)
    assert len(repeated) < 10_000
    with pytest.raises(ImportFailed) as refused:
        import_upload(repeated, "repeated.parquet", "bomb")
    assert "expands to more than 1 MiB" in str(refused.value)
    assert not Dataset.objects.exists()


@override_settings(PRB_UPLOAD_MAX_EXPANDED_BYTES=1024 * 1024)
def test_it_reads_a_parquet_upload_within_the_budget_exactly(db: None, tmp_path) -> None:
    records = [
        {
            "id": f"p{index}",
            "question": f"Question {index}?",
            "profile": [{"text": "I run.", "category": "Sport"}],
            "chosen": "Yes." if index % 2 else "Yes!",
            "rejected": "No.",
            "category": "Sport",
        }
        for index in range(300)
    ]
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), sink, compression="zstd")
    report = import_upload(sink.getvalue(), "fine.parquet", "fine")
    assert report.created == 300
    path = tmp_path / "fine.parquet"
    path.write_bytes(sink.getvalue())
    # The same file imported from disk, unbounded, gives the same pairs.
    local = import_path(path, "local")
    assert local.created == 300
    assert list(local.dataset.pairs.values_list("content_hash", flat=True).order_by("pk")) == list(
        report.dataset.pairs.values_list("content_hash", flat=True).order_by("pk")
    )


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("column", ["profile", "rubric_aspects"])
def test_it_refuses_a_csv_cell_nested_too_deep(db: None, column: str) -> None:
    for levels in (1000, MAX_JSON_DEPTH + 1):
        content = f"question,chosen,rejected,{column}\nWhy?,Yes.,No.,{deep(levels)}\n".encode()
        with pytest.raises(ImportFailed) as refused:
            import_upload(content, "deep.csv", "deep")
        message = str(refused.value)
        assert f'deep.csv line 2, field "{column}"' in message
        assert f"nests deeper than {MAX_JSON_DEPTH} levels" in message
    assert not Dataset.objects.exists()


def test_it_answers_deep_uploads_and_sample_plans_with_400(manager: User, login) -> None:
    client = login(manager)
    csv_body = f"question,chosen,rejected,profile\nWhy?,Yes.,No.,{deep(1000)}\n".encode()
    jsonl_body = json.dumps({"question": "Q", "chosen": "A", "rejected": "B"})[:-1]
    jsonl_body += ', "extra": ' + deep(1000) + "}\n"
    for name, content in [("deep.csv", csv_body), ("deep.jsonl", jsonl_body.encode())]:
        response = upload(client, name, content)
        assert response.status_code == 400, name
        assert response.json()["problems"], name
    dataset = Dataset.objects.create(name="plan")
    for body in (deep(1000), '{"half_width": ' * 1000 + "1" + "}" * 1000):
        response = client.post(
            f"/api/datasets/{dataset.pk}/sample-plan/", body, content_type="application/json"
        )
        assert response.status_code == 400
        assert response.json()["detail"].startswith("JSON parse error")


def api_views() -> list[type]:
    """Every view class the URL map routes to under /api/."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found: list[type] = []

    def walk(patterns: list, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/"):
                view = getattr(pattern.callback, "cls", None) or getattr(
                    pattern.callback, "view_class", None
                )
                if view is not None:
                    found.append(view)

    walk(get_resolver().url_patterns, "")
    return found


def test_every_api_view_reads_json_through_the_depth_limited_parser() -> None:
    from rest_framework.parsers import JSONParser as StockJSONParser

    from prb_annotate.api.parsers import JSONParser

    views = api_views()
    assert len(views) > 20
    for view in views:
        parsers = list(getattr(view, "parser_classes", ()))
        assert StockJSONParser not in parsers, view
        json_parsers = [p for p in parsers if issubclass(p, StockJSONParser)]
        assert all(issubclass(p, JSONParser) for p in json_parsers), view
