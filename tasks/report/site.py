"""The store's reports as a site: every run's report (`reports/<run_id>.html`), a page per panel
(`reports/panels/<panel>.html`, its history) and an index (`reports/index.html`), all linked by
relative links, so the folder, or the bucket, served by any static file server or opened from
disk, is browsable."""

from __future__ import annotations

import re
from collections.abc import Sequence

from roadeval.tasks.report.blocks import Section
from roadeval.tasks.report.build import REPORTS

INDEX_KEY = f"{REPORTS}index.html"
PANELS = "panels/"


def panel_slug(panel: str) -> str:
    """A panel's name as a file name: what is not a letter, digit, '.', '_' or '-' becomes '-'
    (and a leading '.' too, so no page is hidden)."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "-", panel).lstrip(".")
    return slug or "panel"


def panel_key(panel: str) -> str:
    """Where a panel's history page is kept in the store."""
    return f"{REPORTS}{PANELS}{panel_slug(panel)}.html"


def render_site(
    title: str, subtitle: str, sections: Sequence[Section], links: Sequence[tuple[str, str]]
) -> str:
    """A site page as one string, self-contained like a run's report."""
    from roadeval.tasks.report.page import environment

    template = environment().get_template("site.html.j2")
    return str(template.render(title=title, subtitle=subtitle, sections=sections, links=links))
