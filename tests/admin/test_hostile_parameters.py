"""Every admin page answers hostile parameters with a page or a 400, never a 500.

Walks each registered model's list with every parameter it reads (its
filters', search, ordering, page) and each page of the site's own that takes
no argument in its path with the parameters the pages read, as the API's
fuzzing walks the API: PostgreSQL refuses a NUL in text, numbers overflow
their columns, days do not exist.
"""

from __future__ import annotations

import html

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver, reverse

# Each request in a transaction of its own, as in production: a 500's aborted transaction must not
# turn the next request's answer into one.
pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = ["S01\x00", "x" * 3000, "99999999999999999999", "2026-13-45"]
# What the site's own pages read from their address (the tonight page, the players, the counts'
# forms, a report's long tables), and what Django's own pages carry from a list.
PAGE_PARAMETERS = ["q", "p", "table", "gaming_day", "whole", "o", "_changelist_filters"]
FINE = {200, 302, 400, 403, 404}


def _status(client, url: str, parameters: dict) -> int:
    response = client.get(url, parameters)
    # A download left unread would close its server-side cursor whenever it is collected,
    # in the middle of a later query on the same connection; a server closes it at once.
    response.close()
    return response.status_code


def _changelists():
    for model in admin.site._registry:
        yield reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def _parameters_of(client, url: str) -> set[str]:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    cl = response.context["cl"]
    names = {"q", "o", "p", "e", "all", "_to_field"}
    for spec in cl.filter_specs:
        names.update(spec.expected_parameters())
    return names


def _site_pages() -> list[str]:
    """The site's pages that take nothing in their path (its own views, besides the models')."""
    found = []

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name and "<" not in str(pattern.pattern):
                found.append(pattern.name)

    walk(admin.site.get_urls())
    return sorted({name for name in found if name not in {"logout"}})


def test_every_list_answers_every_hostile_parameter(admin_client):
    admin_client.raise_request_exception = False
    broken = []
    for url in _changelists():
        for name in sorted(_parameters_of(admin_client, url)):
            for value in HOSTILE:
                status = _status(admin_client, url, {name: value})
                if status not in FINE:
                    broken.append((url, name, repr(value)[:20], status))
    assert broken == []


def test_every_page_of_the_site_answers_every_hostile_parameter(admin_client):
    admin_client.raise_request_exception = False
    broken = []
    for name in _site_pages():
        try:
            url = reverse(f"admin:{name}")
        except Exception:  # noqa: BLE001 — a name that needs arguments after all
            continue
        for parameter in PAGE_PARAMETERS:
            for value in HOSTILE:
                status = _status(admin_client, url, {parameter: value})
                if status not in FINE:
                    broken.append((url, parameter, repr(value)[:20], status))
    assert broken == []


@pytest.mark.parametrize("url,parameter", [
    ("/admin/rounds/round/", "dealer"), ("/admin/rounds/round/", "player"), ("/admin/rounds/round/", "round_id"),
    ("/admin/audit/protectionfinding/players/", "q"),
])
def test_a_nul_in_the_address_is_a_400_page_naming_it(admin_client, url, parameter):
    response = admin_client.get(url, {parameter: "\x00"})
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert f"The value of '{parameter}' holds a NUL character" in page and "Back to the start page" in page


def test_the_api_keeps_its_own_field_level_refusal(admin_client):
    response = admin_client.get("/api/v1/rounds/", {"dealer": "\x00"})
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
