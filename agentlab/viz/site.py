"""A run as a static website (``agentlab view``): an index of every episode and one page per episode.

Why static files: a run folder is looked at long after it ran, on another machine, or attached to
an issue; a folder of HTML and PNG files opens from disk in any browser, needs no server and
fetches nothing (style and script are inlined, screenshots copied beside the pages). The index
is sortable and filterable (domain, status, agent, router, success, free text) by a few lines of
plain JavaScript; each episode page is built by :mod:`agentlab.viz.episode_page`.

Layout (default ``<run>/view/``)::

    index.html                  every episode of results.jsonl (and any episode folder no row names)
    episodes/<slug>.html        one episode
    episodes/<slug>/*.png       its screenshots with the actions drawn
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from agentlab.fileio import atomic_write_text
from agentlab.viz.episode_page import absent, episode_body, esc, image_saver
from agentlab.record.row import EpisodeRow
from agentlab.viz.runs import RunFolder, load_run, slug
from agentlab.viz.site_assets import page

log = logging.getLogger(__name__)

VIEW_DIR = "view"
INDEX = "index.html"
PAGES = "episodes"
#: the index's filters: (row attribute name, label)
FILTERS = (("domain", "domain"), ("status", "status"), ("agent", "agent"), ("router", "router"), ("success", "success"))


def page_names(run: RunFolder) -> dict[int, str]:
    """A unique file stem per row (by position): the task id, its seed when the run has several,
    a counter when two rows would still share a name."""
    several = len(run.seeds) > 1
    taken: set[str] = set()
    out: dict[int, str] = {}
    for i, row in enumerate(run.rows):
        base = slug(row.id) + (f"-seed-{row.seed}" if several and row.seed is not None else "")
        if row.line == 0:
            base += "-unfinished"
        name, n = base, 2
        while name.lower() in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name.lower())
        out[i] = name
    return out


def _success(row: EpisodeRow) -> str:
    return "" if row.success is None else ("yes" if row.success else "no")


def _num(v: float | int | None, fmt: str = "{}") -> str:
    """A numeric cell that sorts by value; an absent value sorts last."""
    if v is None:
        return '<td class="num" data-sort="">—</td>'
    return f'<td class="num" data-sort="{v}">{esc(fmt.format(v))}</td>'


def _index_row(row: EpisodeRow, href: str, seeds: bool) -> str:
    attrs = {"domain": row.domain or "", "status": row.status or "", "agent": " ".join(row.agents), "router": row.router or "",
             "success": _success(row)}
    data = " ".join(f'data-{k}="{esc(v)}"' for k, v in attrs.items())
    ok = _success(row)
    mark = {"yes": '<span class="ok">✓ yes</span>', "no": '<span class="bad">✗ no</span>'}.get(ok, "—")
    status = esc(row.status or "—") + (' <span class="bad" title="harness error">⚠</span>' if row.error else "")
    cells = [f'<td data-sort="{esc(row.id)}"><a href="{esc(href)}">{esc(row.id)}</a></td>', f"<td>{absent(row.domain)}</td>",
             f"<td>{absent(row.router)}</td>", f"<td>{absent(', '.join(row.agents))}</td>", f'<td data-sort="{ok}">{mark}</td>',
             f"<td>{status}</td>", _num(row.steps), _num(row.llm_calls), _num(row.tokens), _num(row.usd, "{:.4f}"),
             _num(row.seconds, "{:.1f}")]
    if seeds:
        cells.insert(1, _num(row.seed))
    return f"<tr {data}>{''.join(cells)}</tr>"


def _summary(run: RunFolder) -> str:
    rows = [r for r in run.rows if r.line]
    wins = sum(1 for r in rows if r.success)
    acc = f"{100 * wins / len(rows):.1f} %" if rows else "—"
    parts = [f"{len(rows)} episode(s) with a result row", f"ExecutionAcc {acc} ({wins}/{len(rows)})",
             f"{sum(1 for r in rows if r.error)} harness error(s)"]
    if len(run.rows) > len(rows):
        parts.append(f"{len(run.rows) - len(rows)} episode folder(s) without a row (the run stopped during them)")
    m = run.manifest
    if m is not None:
        agents = m.models.get("agents", {})
        router = m.models.get("router", {})
        git = m.git.get("commit")
        parts.append(f"model {agents.get('model_id') or '—'}, router {router.get('kind') or m.options.get('router') or '—'}, "
                     f"seeds {m.seeds or '—'}, made {m.created}" + (f" at commit {str(git)[:10]}" if git else "")
                     + (" (dirty tree)" if m.git.get("dirty") else ""))
    elif run.manifest_note:
        parts.append(run.manifest_note)
    return " · ".join(esc(p) for p in parts)


def index_html(run: RunFolder, names: dict[int, str]) -> str:
    """The index page: a summary line, the filters and the sortable table of every episode."""
    seeds = len(run.seeds) > 1
    selects = []
    for attr, label in FILTERS:
        if attr == "agent":
            values = sorted({a for r in run.rows for a in r.agents})
        else:
            values = sorted({v for r in run.rows if (v := (_success(r) if attr == "success" else getattr(r, attr)))})
        opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        selects.append(f'<label>{label} <select name="{attr}"><option value="">all</option>{opts}</select></label>')
    filters = (f'<div class="filters">{"".join(selects)}<label>text <input type="search" placeholder="id, agent, error…"></label>'
               f'<span class="muted">showing <b id="shown">{len(run.rows)}</b> of {len(run.rows)}</span></div>')
    heads = ["episode", "domain", "router", "agents", "success", "status", "steps", "model calls", "tokens", "USD", "seconds"]
    if seeds:
        heads.insert(1, "seed")
    body = "".join(_index_row(r, f"{PAGES}/{names[i]}.html", seeds) for i, r in enumerate(run.rows))
    table = (f'<table class="episodes"><thead><tr>{"".join(f"<th>{h}</th>" for h in heads)}</tr></thead>'
             f"<tbody>{body}</tbody></table>")
    header = f"<h1>Run {esc(run.path.resolve().name)}</h1><p>{esc(run.path.resolve())}</p><p>{_summary(run)}</p>"
    return page(f"Run {html.escape(run.path.name)}", header, filters + table, script=True)


def write_site(run_dir: str | Path, out: str | Path | None = None, *, progress: bool = False) -> Path:
    """Write the viewer of ``run_dir`` into ``out`` (default ``<run_dir>/view``); returns its ``index.html``.

    Raises :class:`~agentlab.errors.DataError` for a folder that is not a run (see
    :func:`agentlab.viz.runs.load_run`); a damaged episode only damages its own page.
    """
    from tqdm import tqdm

    run = load_run(run_dir)
    site = Path(out) if out is not None else run.path / VIEW_DIR
    names = page_names(run)
    for i, row in tqdm(list(enumerate(run.rows)), desc="view", unit="episode", disable=not progress):
        name = names[i]
        task, body = episode_body(run, row, image_saver(site / PAGES / name, name))
        title = f"{row.id}" + (f" (seed {row.seed})" if row.seed is not None and len(run.seeds) > 1 else "")
        header = (f'<p><a href="../{INDEX}">← all episodes of {esc(run.path.resolve().name)}</a></p>'
                  f"<h1>{esc(title)}</h1><p>{esc(task or '(instruction not recorded)')}</p>")
        atomic_write_text(site / PAGES / f"{name}.html", page(esc(title), header, body))
    index = site / INDEX
    atomic_write_text(index, index_html(run, names))
    log.info("view: %d episode page(s) and the index written to %s", len(run.rows), site)
    return index
