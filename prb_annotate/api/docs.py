"""A documentation page for the API, rendered on the server from the OpenAPI schema.

It needs no JavaScript or CDN (Swagger UI and Redoc load theirs from the internet), so it works
on an offline deployment; the DRF browsable API at ``/api/`` is the interactive part, and
``/api/schema/`` the machine-readable one.
"""

import functools
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator

METHOD_ORDER = ["get", "post", "put", "patch", "delete"]


@dataclass
class Operation:
    method: str
    path: str
    summary: str
    description: str
    parameters: list[dict[str, Any]] = field(default_factory=list)
    body: list[dict[str, Any]] = field(default_factory=list)
    body_type: str = ""
    responses: list[tuple[str, str]] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"{self.method}-{self.path}".replace("/", "-").replace("{", "").replace("}", "")


@functools.cache
def openapi_schema() -> dict[str, Any]:
    # The URL map does not change while the process runs: build the schema once.
    return dict(SchemaGenerator().get_schema(request=None, public=True))


def _type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "allOf" in schema:
        return " & ".join(_type(part, components) for part in schema["allOf"])
    if "oneOf" in schema:
        return " | ".join(_type(part, components) for part in schema["oneOf"])
    kind = str(schema.get("type", "object"))
    if kind == "array":
        return f"list of {_type(schema.get('items', {}), components)}"
    if "enum" in schema:
        return " | ".join(str(value) for value in schema["enum"] if value not in ("", None))
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    return kind


def _fields(schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "type": _type(prop, components),
            "required": name in required,
            "description": prop.get("description", ""),
        }
        for name, prop in schema.get("properties", {}).items()
        if not prop.get("readOnly")
    ]


def operations(schema: dict[str, Any]) -> dict[str, list[Operation]]:
    """The schema's operations grouped by tag, in path order."""
    components = schema.get("components", {}).get("schemas", {})
    groups: dict[str, list[Operation]] = {}
    for path, item in schema.get("paths", {}).items():
        for method in METHOD_ORDER:
            if method not in item:
                continue
            spec = item[method]
            description = spec.get("description", "")
            operation = Operation(
                method=method.upper(),
                path=path,
                summary=spec.get("summary") or description.split("\n", 1)[0],
                description=description,
                parameters=[
                    {
                        "name": param["name"],
                        "in": param["in"],
                        "required": param.get("required", False),
                        "type": _type(param.get("schema", {}), components),
                        "description": param.get("description", ""),
                    }
                    for param in spec.get("parameters", [])
                ],
                responses=[
                    (code, response.get("description", ""))
                    for code, response in spec.get("responses", {}).items()
                ],
            )
            content = spec.get("requestBody", {}).get("content", {})
            if content:
                media_type, body = next(iter(content.items()))
                operation.body_type = media_type
                operation.body = _fields(body.get("schema", {}), components)
            groups.setdefault(spec.get("tags", ["api"])[0], []).append(operation)
    return groups


def api_docs(request: HttpRequest) -> HttpResponse:
    schema = openapi_schema()
    context = {"info": schema.get("info", {}), "groups": operations(schema)}
    return render(request, "prb_annotate/api_docs.html", context)
